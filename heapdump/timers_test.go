package heapdump

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
	"time"
	"unsafe"
)

// parentNode has the shape of a P with its timer heap, but for one thing:
// a large object pointing to an array of {pointer, int64} pairs, whose
// pointees point back to it, at its start (a parent pointer), where a
// timer points into its P's timers field.
type parentNode struct {
	kids []kidSlot
	_    [8 << 10]byte
}

type kidSlot struct {
	k *kid
	n int64
}

type kid struct {
	parent *parentNode
	_      [4]int64
}

var (
	timerSink  []*time.Timer
	parentSink *parentNode
)

// TestTimersFound checks that the timers of this process's timer heaps are
// found in its own dump, that they no longer point to their P, and that a
// tree of the same shape with parent pointers is not taken for them.
func TestTimersFound(t *testing.T) {
	for range 50 {
		timerSink = append(timerSink, time.AfterFunc(time.Hour, func() {}))
	}
	defer func() {
		for _, tm := range timerSink {
			tm.Stop()
		}
		timerSink, parentSink = nil, nil
	}()
	p := &parentNode{}
	for i := range 20 {
		p.kids = append(p.kids, kidSlot{k: &kid{parent: p}, n: int64(i)})
	}
	parentSink = p

	path := filepath.Join(t.TempDir(), "timers.heapdump")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	debug.WriteHeapDump(f.Fd())
	f.Close()
	g, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()

	for i, tm := range timerSink {
		v, ok := g.Find(uint64(uintptr(unsafe.Pointer(tm))))
		if !ok || !g.IsTimer(v) {
			t.Fatalf("timer %d at %p: object %v, IsTimer false", i, tm, ok)
		}
		for _, w := range g.Succ(v) {
			if w != v && g.Size(w) >= minPSize {
				t.Errorf("timer %d still points to an object of %d bytes (its P?)", i, g.Size(w))
			}
		}
	}
	pv, ok := g.Find(uint64(uintptr(unsafe.Pointer(p))))
	if !ok {
		t.Fatal("no object for the parent node")
	}
	for i, s := range p.kids {
		v, ok := g.Find(uint64(uintptr(unsafe.Pointer(s.k))))
		if !ok {
			t.Fatalf("no object for kid %d", i)
		}
		if g.IsTimer(v) || !slices.Contains(g.Succ(v), pv) {
			t.Errorf("kid %d: IsTimer %v, points to its parent %v; want false, true", i, g.IsTimer(v), slices.Contains(g.Succ(v), pv))
		}
	}
}
