// Command leakholders writes a heap dump of itself and then Go 1.27's
// goroutineleak profile (in that order: a dump after the profile is fatal),
// for the tests of "ctxleak holders --leaks". It runs 1,500 goroutines
// blocked for ever in ch <- v on channels nothing else has, each holding
// 16 KiB, which the profile proves leaked, and 200 blocked receiving on a
// channel a global keeps, each holding 16 KiB too, which it cannot call
// leaked. Its one argument is the directory to write into:
//
//	leak.heapdump   the heap dump (0600)
//	leak.pb.gz      the profile (profile.proto): stacks, no goroutine ids
//	leak.txt        its debug=1 text: stacks, no ids
//	leak.debug2.txt its debug=2 form, the traceback of all goroutines with
//	                the leaked ones marked "(leaked)" and their ids
//
// It prints the number of leaked goroutines the profile counts.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/ctxleak/ctxleak/internal/selfdump"
)

// held is the channel the 200 held goroutines wait on: a global keeps it.
var held = make(chan []byte)

// send blocks for ever: no one else has ch.
func send(ch chan []byte, v []byte) { ch <- v }

// wait blocks on the global channel, keeping v.
func wait(v []byte) {
	<-held
	runtime.KeepAlive(v)
}

const leakers, holders = 1500, 200

func main() {
	if len(os.Args) != 2 {
		fail("usage: leakholders DIR")
	}
	dir := os.Args[1]
	p := pprof.Lookup("goroutineleak")
	if p == nil {
		fail("no goroutineleak profile in " + runtime.Version() + ": run it with Go 1.27 or later")
	}
	for range leakers {
		go send(make(chan []byte), make([]byte, 16<<10))
	}
	for range holders {
		go wait(make([]byte, 16<<10))
	}
	parked()
	runtime.GC()
	var proto bytes.Buffer
	d, n, err := selfdump.WriteThenProfileLeaks(dir, "leak-*.heapdump", &proto)
	if err != nil {
		fail(err.Error())
	}
	if err := os.Rename(d.Path, filepath.Join(dir, "leak.heapdump")); err != nil {
		fail(err.Error())
	}
	// A goroutine parked but not yet seen leaked by the first leak
	// cycle is by the next: take the profile again, with back-off.
	for wait := time.Millisecond; n < leakers && wait < 5*time.Second; wait *= 2 {
		time.Sleep(wait)
		proto.Reset()
		if err := p.WriteTo(&proto, 0); err != nil {
			fail(err.Error())
		}
		n = p.Count()
	}
	write(filepath.Join(dir, "leak.pb.gz"), proto.Bytes())
	for name, debug := range map[string]int{"leak.txt": 1, "leak.debug2.txt": 2} {
		var b bytes.Buffer
		if err := p.WriteTo(&b, debug); err != nil {
			fail(err.Error())
		}
		write(filepath.Join(dir, name), b.Bytes())
	}
	fmt.Println(n, "leaked")
}

// parked waits, with back-off, until all the goroutines are parked, read
// from a traceback of all goroutines: not the leak profile, which would
// mark them and make the dump fatal.
func parked() {
	buf := make([]byte, 8<<20)
	for wait := time.Millisecond; wait < 10*time.Second; wait *= 2 {
		s := buf[:runtime.Stack(buf, true)]
		if bytes.Count(s, []byte(" [chan send]:\nmain.send(")) >= leakers &&
			bytes.Count(s, []byte(" [chan receive]:\nmain.wait(")) >= holders {
			return
		}
		time.Sleep(wait)
	}
	fail("the goroutines did not park")
}

func write(path string, b []byte) {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "leakholders:", msg)
	os.Exit(2)
}
