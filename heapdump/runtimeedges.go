package heapdump

import "slices"

// Two kinds of pointer of the runtime's own bookkeeping say nothing about
// who keeps memory alive, yet would make one holder reach what another
// holds:
//   - a goroutine's runtime.g points to its first defer record, and each
//     record to the next: the runtime.g would hold every pending defer, and
//     each defer those deferred before it, though each record is a slot of
//     the root of the frame that deferred it;
//   - a timer in a P's timer heap points back into its P (runtime.timer's
//     ts field), so that whatever holds one timer would reach the P and
//     every other timer of its heap.
//
// cutRuntimeEdges turns each such edge into an edge from the object to
// itself, which changes neither what is live nor the dominators, and notes
// the timers it found.
func (g *Graph) cutRuntimeEdges() {
	recs := g.deferRecs
	slices.Sort(recs)
	isRec := func(addr uint64, hint *int) (NodeID, bool) {
		if addr == 0 {
			return 0, false
		}
		v, ok := g.idx.lookup(addr, hint)
		if !ok {
			return 0, false
		}
		_, found := slices.BinarySearch(recs, NodeID(v))
		return NodeID(v), found
	}
	hint := 0
	for _, d := range g.dump.Defers {
		rec, ok := g.idx.lookup(d.Addr, &hint)
		if !ok || len(g.Succ(NodeID(rec))) > maxRecordPointers {
			continue // on the stack, or not a defer record
		}
		if next, ok := isRec(d.Link, &hint); ok {
			g.cutEdges(NodeID(rec), next)
		}
	}
	for _, gr := range g.dump.Goroutines {
		if first, ok := isRec(gr.Defer, &hint); ok {
			if v, ok := g.idx.lookup(gr.Addr, &hint); ok {
				g.cutEdges(NodeID(v), first)
			}
		}
	}
	g.deferRecs = nil
	g.findTimers()
}

// cutEdges turns the edges from v to w into edges from v to itself.
func (g *Graph) cutEdges(v, w NodeID) {
	s := g.succ[g.start[v]:g.start[v+1]]
	for i := range s {
		if s[i] == w {
			s[i] = v
		}
	}
}

// maxPEdges bounds the heap objects a runtime.p points to: its sudog and
// defer caches (160 slots), its timer heap and a few more.
const maxPEdges = 512

// maxRecordPointers bounds the pointers of a defer record or a timer (a
// runtime.timeTimer has 5): an object with more is not one, and the
// searches stay linear in the edges whatever a crafted dump holds.
const maxRecordPointers = 16

// minPSize is the least size of a runtime.p (16 KiB in Go 1.26, about 10
// KiB in Go 1.22): only objects this large are looked at as Ps.
const minPSize = 4 << 10

// findTimers finds the timers of the Ps' timer heaps by their shape, which
// needs no type information: a P (a large object) points to its heap, an
// array of {timer pointer, when int64} pairs, each of whose timers points
// back into the P (at its timers field, not at its start: resolve marks
// the large objects something points that deep into). It cuts the
// edges back to the P and records the timers, sorted.
func (g *Graph) findTimers() {
	into := g.pointedInto
	g.pointedInto = nil
	stride := uint64(g.words.size) + 8 // runtime.timerWhen
	if g.words.size == 0 {
		return
	}
	var seen []uint64 // bitmap of the heaps looked at: each once
	for p := range g.ObjectsOfSize(minPSize) {
		if into[p/64]&(1<<(p%64)) == 0 || len(g.Succ(p)) > maxPEdges {
			continue // no timer points into it, or a large array of pointers: not a P
		}
		if seen == nil {
			seen = make([]uint64, (g.numObjects+63)/64)
		}
		for _, h := range g.Succ(p) {
			if h == p || seen[h/64]&(1<<(h%64)) != 0 {
				continue
			}
			seen[h/64] |= 1 << (h % 64)
			ts := g.Succ(h)
			if len(ts) == 0 || !g.allPointInto(ts, h, p) || !g.isTimerHeap(h, stride) || !g.pointsInside(ts[0], p) {
				continue
			}
			for _, t := range ts {
				if t != h && t != p {
					g.cutEdges(t, p)
					g.timers = append(g.timers, t)
				}
			}
		}
	}
	slices.Sort(g.timers)
	g.timers = slices.Compact(g.timers)
}

// allPointInto reports whether every node of ts but h has an edge to p.
func (g *Graph) allPointInto(ts []NodeID, h, p NodeID) bool {
	for _, t := range ts {
		if t == h {
			continue
		}
		if succ := g.Succ(t); t == p || len(succ) > maxRecordPointers || !slices.Contains(succ, p) {
			return false
		}
	}
	return true
}

// isTimerHeap reports whether the pointer fields of object h are the
// first words of consecutive elements of stride bytes, from its start or
// from past the malloc header that objects of a size class above 512
// bytes start with.
func (g *Graph) isTimerHeap(h NodeID, stride uint64) bool {
	rec, err := g.ObjectRecord(h, 1)
	if err != nil || len(rec.PtrOffsets) == 0 || rec.PtrOffsets[0] >= stride {
		return false
	}
	base := rec.PtrOffsets[0]
	for i, o := range rec.PtrOffsets {
		if o != base+uint64(i)*stride {
			return false
		}
	}
	return true
}

// minTimersOffset is the least offset of the timers field in a runtime.p
// (thousands of bytes in, past its run queue): a pointer nearer the start
// of an object, even past the malloc header that objects of a size class
// above 512 bytes start with, is to the object, not into it.
const minTimersOffset = 64

// pointsInside reports whether object t has a pointer field that points
// into object p, minTimersOffset bytes or more past its start.
func (g *Graph) pointsInside(t, p NodeID) bool {
	rec, err := g.ObjectRecord(t, 0)
	if err != nil {
		return false
	}
	lo := g.ObjectAddr(p)
	for _, o := range rec.PtrOffsets {
		if w := rec.Word(int64(o)); w >= lo+minTimersOffset && w < lo+g.Size(p) {
			return true
		}
	}
	return false
}

// IsTimer reports whether object v is a timer in a P's timer heap (a
// runtime.timer, or the time.Timer or runtime.timeTimer that embeds one),
// found by the shape of the runtime's timer heaps. Its pointer back into
// its P is left out of its successors: a timer does not hold its P.
func (g *Graph) IsTimer(v NodeID) bool {
	if len(g.timers) == 0 || v < g.timers[0] || v > g.timers[len(g.timers)-1] {
		return false // most nodes, asked once each by a pass over the graph
	}
	_, ok := slices.BinarySearch(g.timers, v)
	return ok
}

// Timers returns the timers IsTimer reports, in node order. The caller
// must not modify them.
func (g *Graph) Timers() []NodeID { return g.timers }
