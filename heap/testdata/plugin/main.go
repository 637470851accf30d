// Command plugin loads the plugin built from ./payload, has it hold a
// buffer of 2 MiB in a global of its own, writes a heap dump of itself and
// prints the buffer's address.
//
// Usage: plugin PLUGIN.so DUMPFILE
package main

import (
	"fmt"
	"os"
	"plugin"
	"runtime"
	"runtime/debug"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: plugin PLUGIN.so DUMPFILE")
		os.Exit(2)
	}
	p, err := plugin.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hold, err := p.Lookup("Hold")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	addr := hold.(func(int) uint64)(2 << 20)
	f, err := os.OpenFile(os.Args[2], os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.GC()
	debug.WriteHeapDump(f.Fd())
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%#x\n", addr)
}
