// Command phases times the phases of one "ctxleak holders" analysis by
// wall clock (read, graph, dominators, report), for profiling work.
//
//	go run ./bench/phases DUMP EXE
package main

import (
	"fmt"
	"os"
	"runtime/trace"
	"strings"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
)

func main() {
	if len(os.Args) < 3 || len(os.Args) > 4 || strings.HasPrefix(os.Args[len(os.Args)-1], "-") {
		// No flags: "phases holders DUMP --binary EXE" would write a
		// trace named --binary.
		fmt.Fprintln(os.Stderr, "usage: phases DUMP EXE [TRACEFILE]")
		os.Exit(2)
	}
	if len(os.Args) > 3 {
		f, err := os.Create(os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		trace.Start(f)
		defer trace.Stop()
	}
	start := time.Now()
	last := start
	mark := func(what string) {
		now := time.Now()
		fmt.Printf("%-12s %6.3fs  (at %6.3fs)\n", what, now.Sub(last).Seconds(), now.Sub(start).Seconds())
		last = now
	}
	bin, err := binsym.Open(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer bin.Close()
	mark("open binary")
	phase := ""
	a, err := heap.Analyze(os.Args[1], bin, heap.ReturnMemory(), heap.OnProgress(func(p heap.Progress) {
		if p.Phase != phase {
			if phase != "" {
				mark(phase)
			}
			phase = p.Phase
		}
	}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer a.Close()
	mark(phase)
	rep, err := a.Holders()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	mark("holders")
	fmt.Printf("%d groups\n", len(rep.Groups))
}
