// Command prog writes a heap dump for bench/hostile: a linked list of
// -list nodes held by a global, a chain of -chain objects of 64 KiB, a
// request payload held through a context by a blocked goroutine, -deferrers
// more blocked goroutines, each with a stack object and a defer record (a
// defer in a loop), -labelled goroutines blocked on one channel inside
// pprof.Do, and -timeouts pending WithTimeout contexts. Built as it is,
// for other architectures, stripped, as a PIE or with cgo, it is also the
// campaign's set of executables.
//
// Usage: prog [-list N] [-chain N] [-deferrers N] [-labelled N] [-timeouts N] DUMPFILE
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
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

//go:noinline
func use(p *[4]*int) { p[1] = p[0] }

// deferrer blocks on ch with buf, an address-taken local (a stack object
// the frame's stack maps leave out), and a deferred closure in a defer
// record of its own.
func deferrer(ch <-chan struct{}, ready chan<- struct{}) {
	var buf [4]*int
	x := 1
	buf[0] = &x
	use(&buf)
	for range 1 {
		defer func() { use(&buf) }()
	}
	ready <- struct{}{}
	<-ch
}

// labelled blocks on ch inside pprof.Do, with a payload in its context:
// the goroutines share the channel's wait queue, a chain of sudogs.
func labelled(ch <-chan struct{}, ready chan<- struct{}) {
	ctx := context.WithValue(context.Background(), key{}, make([]byte, 256))
	pprof.Do(ctx, pprof.Labels("req", "x"), func(ctx context.Context) {
		ready <- struct{}{}
		<-ch
		fmt.Println(ctx.Value(key{}))
	})
}

// pending keeps the cancel funcs of the -timeouts contexts.
var pending []context.CancelFunc

func main() {
	n := flag.Int("list", 1000, "linked list nodes")
	c := flag.Int("chain", 4, "chained 64 KiB objects")
	deferrers := flag.Int("deferrers", 0, "more goroutines blocked with a stack object and a defer record")
	labels := flag.Int("labelled", 0, "more goroutines blocked on one channel inside pprof.Do")
	timeouts := flag.Int("timeouts", 0, "pending WithTimeout contexts, each with a payload")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: prog [-list N] [-chain N] [-deferrers N] [-labelled N] [-timeouts N] DUMPFILE")
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
	// After the check above, which lists every goroutine's stack.
	never := make(chan struct{})
	for range *deferrers {
		go deferrer(never, ready)
		<-ready
	}
	for range *labels {
		go labelled(never, ready)
		<-ready
	}
	for range *timeouts {
		ctx := context.WithValue(context.Background(), key{}, make([]byte, 256))
		_, cancel := context.WithTimeout(ctx, time.Hour)
		pending = append(pending, cancel)
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
