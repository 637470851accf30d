// Command leakprog leaks goroutines, takes Go 1.27's goroutineleak profile
// and then dumps its own heap, for selfdump's tests. Its one argument picks
// the dump:
//
//	guarded  dump, profile, dump again, all through selfdump: the first
//	         dump is written, the second refused; prints both outcomes
//	raw      profile, then runtime/debug.WriteHeapDump unguarded: the
//	         runtime dies (the failure the guard exists for)
//	select   leaks nothing; the main goroutine waits in select {}, which
//	         the profile counts, and on Go 1.27 does not mark: the dump
//	         is written unless main is marked
//	both     WriteThenProfileLeaks: the dump, then the profile; then a
//	         second call: the dump refused, the profile taken
//
// It prints "ok" last when it ends on its own.
package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/ctxleak/ctxleak/internal/selfdump"
)

// leakers is the number of goroutines leaked, each blocked for ever
// sending a 16 KiB buffer on a channel no one else has.
const leakers = 50

func main() {
	if len(os.Args) != 2 {
		fail("usage: leakprog guarded|raw|select")
	}
	p := pprof.Lookup("goroutineleak")
	if p == nil {
		fail("no goroutineleak profile in " + runtime.Version())
	}
	dir, err := os.MkdirTemp("", "leakprog-*")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(dir)
	switch os.Args[1] {
	case "guarded":
		leak()
		dump(dir, "before the profile")
		profile(p, leakers)
		dump(dir, "after the profile")
	case "raw":
		leak()
		profile(p, leakers)
		f, err := os.CreateTemp(dir, "raw-*.heapdump")
		if err != nil {
			fail(err.Error())
		}
		debug.WriteHeapDump(f.Fd())
		fmt.Println("raw dump written")
	case "both":
		leak()
		parked(leakers)
		for _, when := range []string{"first", "second"} {
			d, n, err := selfdump.WriteThenProfileLeaks(dir, "both-*.heapdump", io.Discard)
			fmt.Printf("%s: dump of %d bytes, %d leaked, err %v\n", when, d.Size, n, err)
		}
	case "select":
		go func() {
			profile(p, 1)
			// Go 1.27 takes the main goroutine's mark back; the
			// experiment in Go 1.26 (GOEXPERIMENT=goroutineleakprofile)
			// leaves it marked, and the dump must then be refused.
			buf := make([]byte, 1<<20)
			main := regexp.MustCompile(`(?m)^goroutine 1 \[.*\(leaked\)`).Match(buf[:runtime.Stack(buf, true)])
			fmt.Printf("main marked: %v\n", main)
			dump(dir, "main in select")
			fmt.Println("ok")
			os.RemoveAll(dir)
			os.Exit(0)
		}()
		select {}
	default:
		fail("unknown mode " + os.Args[1])
	}
	fmt.Println("ok")
}

// leak starts the leakers and returns once each has started.
func leak() {
	started := make(chan struct{})
	for range leakers {
		ch := make(chan []byte)
		go func() {
			started <- struct{}{}
			ch <- make([]byte, 16<<10)
		}()
		<-started
	}
}

// parked waits, with back-off, until n goroutines are parked in a channel
// send, without the leak profile, which would mark them.
func parked(n int) {
	buf := make([]byte, 1<<20)
	for wait := time.Millisecond; wait < 5*time.Second; wait *= 2 {
		m := runtime.Stack(buf, true)
		if strings.Count(string(buf[:m]), " [chan send]:") >= n {
			return
		}
		time.Sleep(wait)
	}
	fail("the leakers did not park")
}

// profile takes the goroutineleak profile until it reports want goroutines
// (a leaker not yet parked in its send is not leaked yet), with back-off.
func profile(p *pprof.Profile, want int) {
	for wait := time.Millisecond; ; wait *= 2 {
		if err := p.WriteTo(io.Discard, 0); err != nil {
			fail(err.Error())
		}
		n := p.Count()
		fmt.Printf("goroutineleak profile: %d\n", n)
		if n >= want || wait > 2*time.Second {
			return
		}
		time.Sleep(wait)
	}
}

// dump writes a heap dump through selfdump and prints the outcome.
func dump(dir, when string) {
	d, err := selfdump.Write(dir, "dump-*.heapdump")
	if err != nil {
		fmt.Printf("%s: %v\n", when, err)
		return
	}
	fmt.Printf("%s: dump written, %d bytes\n", when, d.Size)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "leakprog:", msg)
	os.Exit(2)
}
