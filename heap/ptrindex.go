package heap

import (
	"cmp"
	"slices"

	"github.com/ctxleak/ctxleak/heapdump"
)

// manyPointers is the number of pointer fields from which an object's
// pointers are indexed by the object they point into (pointerIndex) rather
// than read one by one: the runtime's timer heap of 80,000 timers, a
// slice of a million contexts, which every path through them would read
// again.
const manyPointers = 64

// maxIndexedPointers bounds the pointers the indexes hold together (8
// bytes each); past it they are let go and built again as needed.
const maxIndexedPointers = 1 << 22

// pointerTarget is one pointer field of an indexed object: the object it
// points into and its offset in words.
type pointerTarget struct {
	node heapdump.NodeID
	word uint32
}

// firstPointer returns the offset of the first pointer field of prev whose
// value points into rec, and that value.
func (t *typer) firstPointer(prev, rec *heapdump.ObjectRecord) (off, value uint64, ok bool) {
	if len(prev.PtrOffsets) >= manyPointers {
		if idx, ok := t.pointerIndex(prev); ok {
			v, found := t.a.g.Find(rec.Addr)
			if !found {
				return 0, 0, false
			}
			i, found := slices.BinarySearchFunc(idx, v, func(p pointerTarget, v heapdump.NodeID) int { return cmp.Compare(p.node, v) })
			if !found {
				return 0, 0, false
			}
			off = uint64(idx[i].word) * uint64(t.a.d.Params.PtrSize)
			return off, prev.Word(int64(off)), true
		}
	}
	for _, off := range prev.PtrOffsets {
		if w := prev.Word(int64(off)); w >= rec.Addr && w < rec.Addr+rec.Size {
			return off, w, true
		}
	}
	return 0, 0, false
}

// pointerIndex returns the pointer fields of prev that point into an
// object, sorted by that object and then by offset, built on first use.
// It reports false for an object whose offsets do not fit the index.
func (t *typer) pointerIndex(prev *heapdump.ObjectRecord) ([]pointerTarget, bool) {
	if idx, ok := t.pointers[prev.Addr]; ok {
		return idx, idx != nil
	}
	ps := uint64(t.a.d.Params.PtrSize)
	if ps == 0 || prev.Size/ps > 1<<32-1 {
		return nil, false
	}
	if t.pointers == nil || t.indexed+len(prev.PtrOffsets) > maxIndexedPointers {
		t.pointers, t.indexed = map[uint64][]pointerTarget{}, 0
	}
	idx := make([]pointerTarget, 0, len(prev.PtrOffsets))
	for _, off := range prev.PtrOffsets {
		if v, ok := t.a.g.Find(prev.Word(int64(off))); ok && off%ps == 0 {
			idx = append(idx, pointerTarget{v, uint32(off / ps)})
		}
	}
	// Stable: the fields of one target stay in offset order.
	slices.SortStableFunc(idx, func(a, b pointerTarget) int { return cmp.Compare(a.node, b.node) })
	t.pointers[prev.Addr] = idx
	t.indexed += len(idx)
	return idx, true
}
