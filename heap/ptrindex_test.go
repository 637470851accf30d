package heap

import (
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
)

// firstPointer finds, through the index of an object's many pointers, the
// field a scan of them finds first, for every object it points into: here
// the runtime's timer heap of 300 pending WithTimeout contexts, and the
// tables of the long-lived context's children.
func TestFirstPointerIndex(t *testing.T) {
	t.Parallel()
	a := runPile(t, "timeouts", 300).analyze(t)
	checked := 0
	for v := range heapdump.NodeID(a.g.NumObjects()) {
		if len(a.g.Succ(v)) < manyPointers {
			continue
		}
		prev, err := a.g.ObjectRecord(v, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(prev.PtrOffsets) < manyPointers {
			continue
		}
		for _, w := range a.g.Succ(v) {
			rec, err := a.g.ObjectRecord(w, 64)
			if err != nil {
				t.Fatal(err)
			}
			off, value, ok := a.types.firstPointer(prev, rec)
			for _, o := range prev.PtrOffsets {
				if x := prev.Word(int64(o)); x >= rec.Addr && x < rec.Addr+rec.Size {
					if !ok || off != o || value != x {
						t.Fatalf("object %d to %d: firstPointer = %d, %#x, %v; the scan finds %d, %#x", v, w, off, value, ok, o, x)
					}
					break
				}
			}
			if !ok {
				t.Fatalf("object %d to %d: firstPointer finds no field", v, w)
			}
			checked++
		}
	}
	if checked < 300 {
		t.Fatalf("%d pointers of objects with %d or more checked, want the 300 timers' at least", checked, manyPointers)
	}
	if a.types.indexed == 0 {
		t.Fatal("no object was indexed")
	}
}
