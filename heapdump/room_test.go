package heapdump

import (
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// The room of an array grown for the records after the objects is faulted
// in, from populateRoomMin bytes and within what the budget has left; the
// objects' arrays' is not.
func TestRoomToPopulate(t *testing.T) {
	p := &parser{origin: 100, keptLimit: 64 << 20}
	size := int(unsafe.Sizeof(Frame{}))
	frames := make([]Frame, 1000, 1000+(4<<20)/size)
	if got := roomToPopulate(p, frames, 100); got != nil {
		t.Errorf("the objects' array: %d elements of room to populate, want none", len(got))
	}
	if got := roomToPopulate(p, frames, 5000); len(got) != cap(frames)-len(frames) {
		t.Errorf("frames: %d elements of room to populate, want all %d", len(got), cap(frames)-len(frames))
	}
	p.kept = p.keptLimit - 2<<20 // 2 MiB left
	if got := roomToPopulate(p, frames, 5000); len(got) != (2<<20)/size {
		t.Errorf("frames, 2 MiB of budget left: %d elements of room to populate, want %d", len(got), (2<<20)/size)
	}
	p.kept = p.keptLimit - 512<<10
	if got := roomToPopulate(p, frames, 5000); got != nil {
		t.Errorf("frames, 512 KiB of budget left: %d elements of room to populate, want none", len(got))
	}
	p.kept = p.keptLimit + 1
	if got := roomToPopulate(p, frames, 5000); got != nil {
		t.Errorf("frames past the budget: %d elements of room to populate, want none", len(got))
	}
	small := make([]uint32, 10, 1000)
	p.kept = 0
	if got := roomToPopulate(p, small, 5000); got != nil {
		t.Errorf("4 KiB of room: %d elements to populate, want none", len(got))
	}
}

// The goroutines that fault in the room of growing arrays and the root
// arrays are done when Load returns: none outlives it, for a caller that
// checks for leaked goroutines. Each here takes a millisecond more.
func TestLoadLeavesNoGoroutine(t *testing.T) {
	d := progDump(t, "-small", "-gc=false")
	defer func(m uintptr, f func()) { populateRoomMin, populated = m, f }(populateRoomMin, populated)
	populateRoomMin = 1
	var done atomic.Int64
	populated = func() {
		time.Sleep(time.Millisecond)
		done.Add(1)
	}
	for range 3 {
		started := populates.Load()
		done.Store(0)
		d.load(t, Options{}).Close()
		if n, m := populates.Load()-started, done.Load(); n == 0 || m != n {
			t.Fatalf("Load returned with %d of its %d goroutines faulting in arrays done", m, n)
		}
	}
}
