// Command leakprof writes Go 1.27's goroutineleak profile of a process
// with 1,500 goroutines blocked for ever in ch <- v on channels nothing
// else has (16 KiB each) and 200 blocked receiving on a channel a global
// keeps, which the profile cannot call leaked. Its arguments are the
// profile.proto file and the legacy text (debug=1) file to write:
//
//	GOTOOLCHAIN=go1.27.3 go run ./profiles/testdata/leakprof leak.pb.gz leak.txt
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

// held is the channel the 200 held goroutines wait on: a global keeps it.
var held = make(chan []byte)

// send blocks for ever: no one else has ch.
func send(ch chan []byte, v []byte) { ch <- v }

// wait blocks on the global channel.
func wait() { <-held }

func main() {
	if len(os.Args) != 3 {
		fail("usage: leakprof PROTO TEXT")
	}
	p := pprof.Lookup("goroutineleak")
	if p == nil {
		fail("no goroutineleak profile: run it with Go 1.27 or later")
	}
	for range 1500 {
		go send(make(chan []byte), make([]byte, 16<<10))
	}
	for range 200 {
		go wait()
	}
	// Take the profile until it reports the 1,500: one not yet parked in
	// its send is not leaked yet.
	for wait := time.Millisecond; ; wait *= 2 {
		if err := p.WriteTo(new(discard), 0); err != nil {
			fail(err.Error())
		}
		if p.Count() >= 1500 || wait > 5*time.Second {
			break
		}
		time.Sleep(wait)
	}
	for i, debug := range []int{0, 1} {
		f, err := os.Create(os.Args[1+i])
		if err == nil {
			err = p.WriteTo(f, debug)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fail(err.Error())
		}
	}
	fmt.Println(p.Count(), "leaked")
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "leakprof:", msg)
	os.Exit(2)
}
