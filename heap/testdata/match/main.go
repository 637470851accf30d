// Command match writes a heap dump of itself, with a goroutine blocked in
// a few frames of package main and globals that hold data, for the tests
// that analyse a dump with the executable that wrote it and with other
// builds: the same source built with other flags, and the source with two
// more functions (the tests insert them where the marker comment is).
//
// Usage: match DUMPFILE
package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// cache and last are globals that hold heap objects.
var (
	cache = map[string][]byte{}
	last  *[]byte
)

func main() {
	// EXTRA: the variant's calls go here.
	ready := make(chan struct{})
	stop := make(chan struct{})
	go hold(ready, stop, make([]byte, 64<<10))
	<-ready
	cache["a"] = make([]byte, 4<<10)
	b := make([]byte, 1<<10)
	last = &b
	f, err := os.OpenFile(os.Args[1], os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	debug.WriteHeapDump(f.Fd())
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	close(stop)
}

// hold keeps data alive while it waits in wait.
//
//go:noinline
func hold(ready, stop chan struct{}, data []byte) {
	wait(ready, stop)
	fmt.Fprintln(os.Stderr, len(data))
}

//go:noinline
func wait(ready, stop chan struct{}) {
	ready <- struct{}{}
	<-stop
}
