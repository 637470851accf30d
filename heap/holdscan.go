package heap

import (
	"math/bits"
	"slices"
	"sync"

	"github.com/ctxleak/ctxleak/heapdump"
)

// groupHoldings looks at every node once to find the holdings. On a heap
// of piles most of them are shared holdings without large objects, each
// keyed by two numbers (sharedKey): the scan finds those, and adds up runs
// of consecutive ones held alike, on both cores, half the nodes each. The
// keys are made after, on one core and in node order, so that the ids of
// sets and signatures (sigSet, sigID), which the keys intern, do not
// depend on which core ran first.

// sharedRun is a run of shared holdings without large objects, all of
// holder set set (an id of shares) and slot slot, the first at node v:
// what they retain added up.
type sharedRun struct {
	v                 heapdump.NodeID
	set               uint32
	slot              uint64
	count             int
	retained, objects uint64
	minEach, maxEach  uint64
	members           []heapdump.NodeID // when the analysis records them (recordMembers)
}

// holdingScan is what the scan of some nodes found, each in node order:
// the runs of shared holdings without large objects, and the other
// holdings, which holdingKey keys.
type holdingScan struct {
	runs   []sharedRun
	others []heapdump.NodeID
	// shared adds up what the super-root's kids among the nodes retain,
	// bytes and objects (Analysis.shared).
	shared [2]uint64
}

// scanParallelMin is the number of nodes from which scanHoldings uses both
// cores.
const scanParallelMin = 1 << 16

// scanHoldings returns what the scan of the nodes below n found, part by
// part in node order; large are the large objects and hl their holdings,
// both sorted. It scans a.scanParts parts of the nodes at once, or when
// that is 0 two from scanParallelMin nodes on.
func (a *Analysis) scanHoldings(n heapdump.NodeID, large []heapdump.NodeID, hl largeHoldings) []holdingScan {
	a.shares() // computed before the parts read it
	parts := a.scanParts
	if parts <= 0 {
		parts = 1
		if n >= scanParallelMin {
			parts = 2
		}
	}
	scans := make([]holdingScan, parts)
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := heapdump.NodeID(int(n)*i/parts), heapdump.NodeID(int(n)*(i+1)/parts)
		wg.Go(func() { scans[i] = a.scanPart(lo, hi, large, hl) })
	}
	wg.Wait()
	return scans
}

// scanPart scans nodes lo to hi-1. It reads the analysis only, and
// sharedSlot's cache not at all: both cores run it. The tops of holdings
// are the objects the super-root immediately dominates (shared, or a
// goroutine's runtime.g) and those a holder does (heldTops): it reads them
// from their bitmaps a word of 64 nodes at a time, and ranks the kids as
// it goes.
func (a *Analysis) scanPart(lo, hi heapdump.NodeID, large []heapdump.NodeID, hl largeHoldings) holdingScan {
	var out holdingScan
	s := a.shareIdx
	a.holdingTops()
	kids, held := s.kids.Words(), a.heldTops
	gNodes := a.gNodes                              // the runtime.g objects, by node: shares indexed them (prepareConcurrent)
	hi = min(hi, heapdump.NodeID(a.g.NumObjects())) // root nodes top no holding
	if lo >= hi {
		return out
	}
	li, _ := slices.BinarySearch(large, lo)
	ti, _ := slices.BinarySearch(hl.tops, lo)
	var runFirst, runEnd heapdump.NodeID // the run of objects of one size, runSize
	var runSize uint64
	for w := lo / 64; w <= (hi-1)/64; w++ {
		kw := kids[w]
		words := kw | held[w]
		if w == lo/64 {
			words &^= 1<<(lo%64) - 1
		}
		if w == (hi-1)/64 && hi%64 != 0 {
			words &= 1<<(hi%64) - 1
		}
		for ; words != 0; words &= words - 1 {
			bit := uint(bits.TrailingZeros64(words))
			v := w*64 + heapdump.NodeID(bit)
			if kw&(1<<bit) != 0 {
				out.shared[0] += a.retained[v]
				out.shared[1] += uint64(a.objects[v])
			}
			for li < len(large) && large[li] < v {
				li++
			}
			for ti < len(hl.tops) && hl.tops[ti] < v {
				ti++
			}
			if gNodes[w]&(1<<bit) != 0 || a.g.IsTimer(v) {
				continue // a goroutine or a timer itself, which the runtime holds
			}
			if kw&(1<<bit) == 0 || (ti < len(hl.tops) && hl.tops[ti] == v) || (li < len(large) && large[li] == v) {
				out.others = append(out.others, v)
				continue
			}
			// A shared holding with no large object: most of a heap of
			// piles, most often held as the last one.
			if v < runFirst || v >= runEnd {
				runFirst, runEnd, runSize = a.g.SizeRun(v)
			}
			set := s.set[s.kids.Below(uint32(v))]
			r, objs := a.retained[v], a.RetainedObjects(v)
			if k := len(out.runs) - 1; k >= 0 && out.runs[k].set == set && out.runs[k].slot == runSize {
				run := &out.runs[k]
				run.count++
				run.retained += r
				run.objects += objs
				run.minEach, run.maxEach = min(run.minEach, r), max(run.maxEach, r)
				if a.recordMembers {
					run.members = append(run.members, v)
				}
				continue
			}
			out.runs = append(out.runs, sharedRun{v: v, set: set, slot: runSize, count: 1, retained: r, objects: objs, minEach: r, maxEach: r})
			if a.recordMembers {
				out.runs[len(out.runs)-1].members = []heapdump.NodeID{v}
			}
		}
	}
	return out
}

// addRun counts the run of shared holdings as members of p.
func (p *pending) addRun(run *sharedRun) {
	if p.count == 0 {
		p.rep, p.minEach, p.maxEach = run.v, run.minEach, run.maxEach
	}
	p.count += run.count
	p.bytes += run.retained
	p.retained += run.retained
	p.objects += run.objects
	p.minEach, p.maxEach = min(p.minEach, run.minEach), max(p.maxEach, run.maxEach)
	p.members = append(p.members, run.members...)
}
