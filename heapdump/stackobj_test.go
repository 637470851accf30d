package heapdump

import (
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// Stack objects that do not fit their frame, that overlap, or whose masks
// claim more pointers than the object holds add nothing and break nothing:
// the graph is that of a dump read without them, plus only slots that point
// into objects, each in the frame's bytes.
func TestStackObjectsHostile(t *testing.T) {
	t.Parallel()
	d := progDump(t)
	base := d.load(t, Options{})
	bogus := func(entry uint64) []binsym.StackObject {
		return []binsym.StackObject{
			{Off: -8, Size: 1 << 30, PtrBytes: 1 << 30, Mask: []byte{0xff, 0xff}}, // past the frame
			{Off: 1 << 40, Size: 8, PtrBytes: 8, Mask: []byte{1}},                 // past the caller
			{Off: -16, Size: 16, PtrBytes: 64, Mask: []byte{0xff}},                // mask longer than the object
			{Off: -16, Size: 16, PtrBytes: 16, Mask: []byte{3}},                   // overlapping the one before
			{Off: 0, Size: 8, PtrBytes: 8},                                        // no mask
		}
	}
	g := d.load(t, Options{StackObjects: bogus})
	checkGraph(t, g)
	if g.NumObjects() != base.NumObjects() || g.Stats().LiveObjects < base.Stats().LiveObjects {
		t.Fatalf("%d objects, %d live; without stack objects %d, %d", g.NumObjects(), g.Stats().LiveObjects, base.NumObjects(), base.Stats().LiveObjects)
	}
	dump := g.Dump()
	g.ForEachRoot(func(r *Root) bool {
		for _, s := range g.RootSlots(r.Node) {
			so := g.StackObject(&s)
			if so == nil {
				if s.InStackObject() {
					t.Errorf("slot %+v: in a stack object, but none is given", s)
				}
				continue
			}
			f := &dump.Frames[s.Frame]
			if s.Offset+8 > f.Size || s.Offset < s.StackObjectOffset || s.Offset-s.StackObjectOffset >= uint64(so.Size) || s.Addr != f.SP+s.Offset {
				t.Errorf("slot %+v outside its object or its frame (SP %#x, %d bytes)", s, f.SP, f.Size)
			}
			if _, ok := g.Find(s.Value); !ok {
				t.Errorf("slot %+v points to no object", s)
			}
		}
		return true
	})
}

// A frame costs the stack objects it and its caller can hold, not every
// record of its function: 65,536 records of a byte each, all below every
// frame or all past every caller, are passed over by a search or at the
// first, rather than each looked at for each frame (100,000 goroutines
// would have made that billions).
func TestStackObjectsManyRecords(t *testing.T) {
	t.Parallel()
	d := progDump(t)
	const n = 1 << 16
	for _, tc := range []struct {
		name  string
		first int64
	}{{"locals below every frame", -1 << 40}, {"arguments past every caller", 1 << 40}} {
		recs := make([]binsym.StackObject, n)
		for i := range recs {
			recs[i] = binsym.StackObject{Off: tc.first + int64(i), Size: 1}
		}
		g := d.load(t, Options{StackObjects: func(uint64) []binsym.StackObject { return recs }})
		checkGraph(t, g)
		if frames := len(g.Dump().Frames); g.stackRecords > 2*frames {
			t.Errorf("%s: %d records looked at for %d frames", tc.name, g.stackRecords, frames)
		}
	}
}
