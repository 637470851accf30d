package heapdump

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
	"unsafe"
)

// deferSink keeps what deferHolder's deferred closure would store.
var deferSink []byte

// deferHolder defers, in a loop, a closure that captures a payload, so the
// defer has a defer record (a defer in a loop is never open-coded; under
// -race none is), then blocks until release is closed.
//
//go:noinline
func deferHolder(ready chan<- [2]uintptr, release <-chan struct{}) {
	for range 1 {
		p := make([]byte, 1<<20)
		f := func() { deferSink = p }
		ready <- [2]uintptr{*(*uintptr)(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(unsafe.SliceData(p)))}
		defer f()
	}
	<-release
}

// TestDeferRecordRoots checks that a defer record, and through it its
// closure, is a slot of the root of the frame that deferred it: the stack
// maps leave it out.
func TestDeferRecordRoots(t *testing.T) {
	ready, release := make(chan [2]uintptr), make(chan struct{})
	go deferHolder(ready, release)
	addrs := <-ready
	// The goroutine may not have reached <-release yet: dump until its
	// frame shows the defer record.
	path := filepath.Join(t.TempDir(), "defer.heapdump")
	var g *Graph
	for range 100 {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		debug.WriteHeapDump(f.Fd())
		f.Close()
		if g, err = Load(path, Options{}); err != nil {
			t.Fatal(err)
		}
		if hasDefer(g, "deferHolder") {
			break
		}
		g.Close()
		g = nil
	}
	close(release)
	if g == nil {
		t.Fatal("no dump shows deferHolder's defer record")
	}
	defer g.Close()
	closure, ok := g.Find(uint64(addrs[0]))
	if !ok {
		t.Fatalf("no object at the closure's address %#x", addrs[0])
	}
	payload, ok := g.Find(uint64(addrs[1]))
	if !ok {
		t.Fatalf("no object at the payload's address %#x", addrs[1])
	}
	// The record is an object (a defer in a loop): a slot of deferHolder's
	// frame root holds it, and it holds the closure.
	di := slices.IndexFunc(g.Dump().Defers, func(d Defer) bool { return d.Fn == uint64(addrs[0]) })
	if di < 0 {
		t.Fatal("no defer record has the closure")
	}
	rec, ok := g.Find(g.Dump().Defers[di].Addr)
	if !ok {
		t.Fatalf("the defer record at %#x is not an object", g.Dump().Defers[di].Addr)
	}
	found := false
	for i, r := range g.roots {
		if r.Kind != RootFrame || g.Dump().FrameFunc(r.Frame) != "github.com/ctxleak/ctxleak/heapdump.deferHolder" {
			continue
		}
		for _, s := range g.RootSlots(g.roots[i].Node) {
			if s.Field == FieldRecord && s.Node == rec {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("deferHolder's frame root has no record slot for the defer record")
	}
	if !slices.Contains(g.Succ(rec), closure) {
		t.Error("the defer record does not point to the closure")
	}
	// The goroutine's runtime.g does not chain to it: its root holds it.
	holder := -1
	for i := range g.Dump().Frames {
		if g.Dump().FrameFunc(i) == "github.com/ctxleak/ctxleak/heapdump.deferHolder" {
			holder = i
			break
		}
	}
	if holder < 0 {
		t.Fatal("no frame of deferHolder")
	}
	gr := g.Dump().Goroutines[g.Dump().Frames[holder].Goroutine]
	if gv, ok := g.Find(gr.Addr); ok && slices.Contains(g.Succ(gv), rec) {
		t.Error("the goroutine's runtime.g still points to the defer record")
	}
	if succ := g.Succ(closure); len(succ) != 1 || succ[0] != payload {
		t.Errorf("the closure points to nodes %v, want the payload %d", succ, payload)
	}
}

func hasDefer(g *Graph, fn string) bool {
	for _, d := range g.Dump().Defers {
		for i, f := range g.Dump().Frames {
			if f.SP == d.SP && g.Dump().FrameFunc(i) == "github.com/ctxleak/ctxleak/heapdump."+fn && d.Fn != 0 {
				return true
			}
		}
	}
	return false
}
