// Command dumpprog builds a small heap with known holders and writes a heap
// dump of itself, for the heap package's tests.
//
// Usage: dumpprog [-gc=false] [-small] FILE
//
// It prints "name value" lines the tests check the dump against: payload
// and context addresses and, after runtime.GC(), the HeapAlloc of
// runtime.MemStats.
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

// Every allocation is sampled, so the dump links objects to their stacks.
var _ = func() int { runtime.MemProfileRate = 1; return 0 }()

type key struct{}

type node struct {
	next *node
	id   int
	pad  [8]int64
}

// global holds a payload through a global variable.
var global struct {
	name    string
	payload []byte
}

// list, index and nodes are live, pointer-heavy data so HeapAlloc is more
// than the payloads; nodes is one object too big for the reader's buffer.
var (
	list  *node
	index map[int]*node
	nodes []*node
)

// finalized has a finalizer; it is reachable only through it.
type finalized struct{ buf []byte }

// finalizerRunning receives once the first finalizer runs; it then blocks
// forever, so the second stays queued.
var finalizerRunning = make(chan struct{}, 2)

func finalize(f *finalized) {
	finalizerRunning <- struct{}{}
	select {}
}

// scale divides payload sizes; nodeCount is the length of list.
var scale, nodeCount = 1, 20000

//go:noinline
func makePayload(size int) []byte {
	b := make([]byte, size/scale)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// waitHeld blocks with ctx live across the receive: ctx is spilled to its
// argument slots, which are in the caller's frame.
//
//go:noinline
func waitHeld(ctx context.Context, ch chan struct{}) int {
	<-ch
	return len(ctx.Value(key{}).([]byte))
}

//go:noinline
func loopHeld(ctx context.Context, ch chan struct{}) {
	waitHeld(ctx, ch)
}

// waitDead reads ctx, then blocks forever with ctx dead.
//
//go:noinline
func waitDead(ctx context.Context, ch chan struct{}) int {
	n := len(ctx.Value(key{}).([]byte))
	<-ch
	return n
}

//go:noinline
func startHeld(ch chan struct{}) {
	ctx := context.WithValue(context.Background(), key{}, makePayload(3<<20))
	fmt.Printf("held_ctx %p\n", ctx)
	fmt.Printf("held_payload %p\n", ctx.Value(key{}).([]byte))
	go loopHeld(ctx, ch)
}

//go:noinline
func startDead(ch chan struct{}) {
	ctx := context.WithValue(context.Background(), key{}, makePayload(5<<20))
	fmt.Printf("dead_payload %p\n", ctx.Value(key{}).([]byte))
	go waitDead(ctx, ch)
}

// setFinalizers sets finalizers on two unreachable objects. After a GC,
// one runs and blocks, the other stays in the finalizer queue.
//
//go:noinline
func setFinalizers() {
	for i, size := range []int{2 << 20, 1 << 20} {
		f := &finalized{buf: makePayload(size)}
		fmt.Printf("finalized_payload%d %p\n", i, f.buf)
		runtime.SetFinalizer(f, finalize)
	}
}

// waitBlocked polls the goroutine stacks, backing off, until every one of
// fns shows up blocked on a channel receive.
func waitBlocked(fns ...string) {
	buf := make([]byte, 1<<20)
	for d := 50 * time.Microsecond; ; d *= 2 {
		n := runtime.Stack(buf, true)
		all := true
		for _, fn := range fns {
			found := false
			for _, g := range strings.Split(string(buf[:n]), "\n\n") {
				if strings.Contains(g, "[chan receive") && strings.Contains(g, "main."+fn+"(") {
					found = true
				}
			}
			all = all && found
		}
		if all {
			return
		}
		time.Sleep(min(d, 100*time.Millisecond))
	}
}

func main() {
	gc := flag.Bool("gc", true, "run the GC before dumping")
	small := flag.Bool("small", false, "make payloads 1/32 the size and the list 1/100")
	flag.Parse()
	if *small {
		scale, nodeCount = 32, 200
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: dumpprog [-gc=false] [-small] FILE")
		os.Exit(2)
	}
	if !*gc {
		// Nothing is freed, so dead objects stay in the dump.
		debug.SetGCPercent(-1)
	}

	for i := 0; i < nodeCount; i++ {
		list = &node{next: list, id: i}
	}
	index = make(map[int]*node)
	for n := list; n != nil; n = n.next {
		if n.id%2 == 0 {
			index[n.id] = n
		}
		nodes = append(nodes, n)
	}
	global.name = "global"
	global.payload = makePayload(7 << 20)
	fmt.Printf("global_payload %p\n", global.payload)

	ch := make(chan struct{})
	startHeld(ch)
	startDead(ch)
	setFinalizers()
	waitBlocked("waitHeld", "waitDead")
	if *gc {
		runtime.GC() // queues both finalizers
		<-finalizerRunning
	}

	f, err := os.OpenFile(flag.Arg(0), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *gc {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Printf("heap_alloc %d\n", m.HeapAlloc)
	}
	debug.WriteHeapDump(f.Fd())
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.KeepAlive(ch)
}
