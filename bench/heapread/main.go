// Command heapread loads a heap dump with the heap package and prints what
// it found and how long reading and building the graph took. It is the
// reader half of bench/heapread.sh.
//
// With -floor it only decodes every uvarint of every record, front to back,
// skipping strings and contents (floor.go): the decode floor of issue 10's
// targets, which ctxleak holders is measured against.
//
// Usage: heapread [-floor] [-cpuprofile FILE] [-memprofile FILE] DUMP
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/ctxleak/ctxleak/heapdump"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "heapread:", err)
		os.Exit(2)
	}
}

func run(stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("heapread", flag.ContinueOnError)
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile to `file`")
	floorOnly := fs.Bool("floor", false, "only decode every uvarint of every record (the decode floor)")
	memprofile := fs.String("memprofile", "", "write a heap profile to `file` after loading")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: heapread [-floor] [-cpuprofile FILE] [-memprofile FILE] DUMP")
	}
	if *floorOnly {
		t0 := time.Now()
		records, ints, err := floor(fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "records %d, uvarints %d\nfloor %.3fs\n", records, ints, time.Since(t0).Seconds())
		return nil
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	t0 := time.Now()
	g, err := heapdump.Load(fs.Arg(0), heapdump.Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	s := g.Stats() // the first call finds what is live, which Load used to do
	elapsed := time.Since(t0)
	fmt.Fprintf(stdout, "objects %d (%d bytes), live %d (%d bytes), dead %d (%d bytes)\n",
		s.Objects, s.Bytes, s.LiveObjects, s.LiveBytes, s.DeadObjects, s.DeadBytes)
	fmt.Fprintf(stdout, "edges %d, dangling %d, roots %d, goroutines %d, frames %d\n",
		s.Edges, s.Dangling, g.NumRoots(), len(g.Dump().Goroutines), len(g.Dump().Frames))
	fmt.Fprintf(stdout, "load %.3fs\n", elapsed.Seconds())
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			return err
		}
	}
	runtime.KeepAlive(g)
	return nil
}
