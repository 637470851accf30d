// Command piles builds one pile of small retained objects, then writes a
// heap dump of itself and prints what it built as JSON, so that tests can
// check how "ctxleak holders" groups the pile.
//
// Usage: piles PATTERN[:ARG] N DUMPFILE
//
// Files other than main.go add patterns to the patterns table from an init
// function, one file per topic (realworld.go's only with the tag pilesreal,
// typing_cgo.go's with pilescgo). Patterns built in main:
//   - goroutines N: N goroutines in main.wait, each holding a context with
//     a 4 KiB value;
//   - shared N: N buffers of 4 KiB, each in two global slices, main.left
//     and main.right: no single root holds one;
//   - list N: a linked list of N nodes held by the global main.head, whose
//     last node holds a 2 MiB payload;
//   - indexed N: a linked list of N nodes held by main.head, each node also
//     in the global slice main.nodes, every third with a 1 KiB payload: N
//     shared nodes that retain one object or two;
//   - clean N: N goroutines blocked on one channel, holding nothing else.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"
)

// valueSize is the size of each goroutine's context value.
const valueSize = 4 << 10

type ctxKey struct{}

// release is never closed before the dump.
var release = make(chan struct{})

// wait holds ctx across a receive that never completes before the dump.
//
//go:noinline
func wait(ctx context.Context, ready chan<- struct{}) {
	ready <- struct{}{}
	<-release
	used(ctx)
}

// idle blocks without holding anything but the channel.
func idle(ready chan<- struct{}) {
	ready <- struct{}{}
	<-release
}

// used pretends to use ctx so the compiler keeps it live.
//
//go:noinline
func used(ctx context.Context) int {
	if b, ok := ctx.Value(ctxKey{}).([]byte); ok {
		return len(b)
	}
	return 0
}

var left, right []*[valueSize]byte

// node is a linked list's node.
type node struct {
	next    *node
	id      int
	payload []byte
}

var (
	head  *node
	nodes []*node
)

// result is what the program prints after the dump.
type result struct {
	Pattern     string `json:"pattern"`
	N           int    `json:"n"`
	PayloadAddr uint64 `json:"payload_addr,omitempty"`
	// Addrs holds other addresses a pattern reports, by name.
	Addrs map[string]uint64 `json:"addrs,omitempty"`
}

// A pattern builds its pile of n before the dump, noting in res what the
// test needs to know.
type pattern func(n int, res *result)

// patterns holds the patterns of files other than main.go, by name.
var patterns = map[string]pattern{}

// patternArg is what follows the pattern's name and a colon, if anything.
var patternArg string

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: piles PATTERN N DUMPFILE")
		os.Exit(2)
	}
	pattern, path := os.Args[1], os.Args[3]
	if pattern != "list" && !strings.HasPrefix(pattern, "chain:") {
		runtime.MemProfileRate = 1 // a sample per object: slow for a long list
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "bad N", os.Args[2])
		os.Exit(2)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res := result{Pattern: pattern, N: n}
	ready := make(chan struct{})
	switch pattern {
	case "goroutines":
		for range n {
			ctx := context.WithValue(context.Background(), ctxKey{}, make([]byte, valueSize))
			go wait(ctx, ready)
			<-ready
		}
		waitParked("main.wait", n)
	case "shared":
		for range n {
			b := new([valueSize]byte)
			left = append(left, b)
			right = append(right, b)
		}
	case "list":
		payload := make([]byte, 2<<20)
		res.PayloadAddr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(payload))))
		head = &node{id: n - 1, payload: payload}
		for i := n - 2; i >= 0; i-- {
			head = &node{next: head, id: i}
		}
	case "indexed":
		nodes = make([]*node, n)
		for i := n - 1; i >= 0; i-- {
			head = &node{next: head, id: i}
			if i%3 == 0 {
				head.payload = make([]byte, 1<<10)
			}
			nodes[i] = head
		}
	case "clean":
		for range n {
			go idle(ready)
			<-ready
		}
		waitParked("main.idle", n)
	default:
		// A pattern may take an argument after a colon: "chain:65536".
		name, arg, _ := strings.Cut(pattern, ":")
		build, ok := patterns[name]
		if !ok {
			fmt.Fprintln(os.Stderr, "unknown pattern", pattern)
			os.Exit(2)
		}
		patternArg = arg
		build(n, &res)
	}
	runtime.GC()
	debug.WriteHeapDump(f.Fd())
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		os.Exit(1)
	}
	runtime.KeepAlive(ready)
}

// waitParked returns once n goroutines in fn are parked on a receive.
func waitParked(fn string, n int) { waitBlocked(fn, "[chan receive", n) }

// waitBlocked returns once n goroutines in fn are blocked with the status
// state (e.g. "[chan send") in their traceback.
func waitBlocked(fn, state string, n int) {
	buf := make([]byte, 64<<20)
	for {
		m := runtime.Stack(buf, true)
		parked := 0
		for _, g := range strings.Split(string(buf[:m]), "\n\n") {
			if strings.Contains(g, state) && strings.Contains(g, fn+"(") {
				parked++
			}
		}
		if parked >= n {
			return
		}
		runtime.Gosched()
	}
}
