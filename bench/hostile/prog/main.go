// Command prog writes a heap dump for bench/hostile: a linked list of
// -list nodes held by a global, a chain of -chain objects of 64 KiB, and a
// request payload held through a context by a blocked goroutine. Built as
// it is, for other architectures, stripped, as a PIE or with cgo, it is
// also the campaign's set of executables.
//
// Usage: prog [-list N] [-chain N] DUMPFILE
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// build is set with -ldflags=-X main.build=... to make a different build.
var build = "a"

type node struct {
	next *node
	id   int
	pad  [6]int64
}

type big struct {
	next *big
	data [64 << 10]byte
}

type key struct{}

var (
	list  *node
	chain *big
)

//go:noinline
func hold(ctx context.Context, ready chan<- struct{}) {
	ready <- struct{}{}
	<-ctx.Done()
	fmt.Println(ctx.Value(key{}).([]byte)[0])
}

func main() {
	n := flag.Int("list", 1000, "linked list nodes")
	c := flag.Int("chain", 4, "chained 64 KiB objects")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: prog [-list N] [-chain N] DUMPFILE")
		os.Exit(2)
	}
	runtime.MemProfileRate = 1
	for i := range *n {
		list = &node{next: list, id: i}
	}
	for range *c {
		chain = &big{next: chain}
	}
	ready := make(chan struct{})
	ctx := context.WithValue(context.Background(), key{}, make([]byte, 2<<20))
	go hold(ctx, ready)
	<-ready
	for !parked() {
		time.Sleep(time.Millisecond)
	}
	f, err := os.OpenFile(flag.Arg(0), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.GC()
	debug.WriteHeapDump(f.Fd())
	f.Close()
	fmt.Println(build)
}

// parked reports whether the goroutine in hold is blocked on its channel.
func parked() bool {
	buf := make([]byte, 1<<16)
	s := string(buf[:runtime.Stack(buf, true)])
	return strings.Contains(s, "main.hold(") && strings.Contains(s, "[chan receive")
}
