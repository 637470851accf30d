package heapdump

import (
	"cmp"
	"encoding/binary"
	"io"
	"iter"
	"math/bits"
	"slices"
	"sync"

	"github.com/ctxleak/ctxleak/binsym"
)

// NodeID names a node of a Graph: an object, a root node or the super-root.
type NodeID uint32

// NoNode is the NodeID of no node.
const NoNode NodeID = ^NodeID(0)

// Graph is the object graph of a heap dump, ready for a dominator
// computation.
//
// Nodes are numbered: objects 0..NumObjects()-1 in dump order, then one root
// node per root in the order ForEachRoot gives, then the super-root, which
// is the last node and points to every root node. The successors of an
// object are the objects its pointer fields point into (interior pointers
// resolve to the enclosing object), but for pointers of the runtime's
// bookkeeping, which become edges to the object itself: those that chain a
// goroutine's defer records (each is a slot of its frame's root) and a timer's
// pointer back into its P (see IsTimer). Those of a root node are the
// objects its slots point into, one per slot, in the order of RootSlots.
type Graph struct {
	dump       *Dump // every record but the objects
	numObjects int
	roots      []Root
	start      []uint32 // node v's successors are succ[start[v]:start[v+1]]
	succ       []NodeID
	stats      Stats

	path      string
	src       *source // what Contents read
	ra        io.ReaderAt
	size      int64
	closer    io.Closer
	words     wordDecoder
	idx       objIndex
	liveOnce  sync.Once
	live      []uint64 // bitmap over nodes
	rootSlots []RootSlot
	samples   []allocSample // sorted by object
	timers    []NodeID      // the timers of the Ps' timer heaps, sorted (IsTimer)
	// rootNames are the roots' names (RootName).
	rootNames []string
	// stackObjects are the stack objects slots are in (RootSlot.stackObject).
	stackObjects []*binsym.StackObject
	deferRecs    []NodeID // the defer records that are objects and roots' slots
	// stackRecords counts the stack-object records the build looked at,
	// for tests.
	stackRecords int
	// pointedInto marks the objects of minPSize or more that a pointer
	// reaches minTimersOffset bytes or more into, until findTimers.
	pointedInto []uint64
}

// wordDecoder decodes the dump's pointer-sized words.
type wordDecoder struct {
	size  int64 // 4 or 8; 0 when the dump has no params record
	order binary.ByteOrder
}

// word decodes the word at off of b, or returns 0 when it is out of range
// or the size is unknown.
func (d wordDecoder) word(b []byte, off int64) uint64 {
	if d.size == 0 || off < 0 || off+d.size > int64(len(b)) {
		return 0
	}
	if d.size == 8 {
		return d.order.Uint64(b[off:])
	}
	return uint64(d.order.Uint32(b[off:]))
}

// Stats are totals over the objects of a dump. Live means reachable from a
// root; the rest are dead objects and the fake objects the runtime writes
// for the unused tail of spans, which only reachability tells apart from
// live.
type Stats struct {
	Objects     uint64 // object records
	Bytes       uint64 // their total size
	LiveObjects uint64
	LiveBytes   uint64
	DeadObjects uint64 // unreachable: dead objects and span-tail fakes
	DeadBytes   uint64
	Edges       uint64 // object-to-object pointers
	Dangling    uint64 // pointer values inside the arenas that hit no object (free slots, unused memory)
}

type allocSample struct{ obj, bucket uint32 }

// Dump returns every record of the dump but the objects.
func (g *Graph) Dump() *Dump { return g.dump }

// Name returns the name of the dump: its path, as given to Load or Read.
func (g *Graph) Name() string { return g.path }

// NumNodes returns the number of nodes: objects, root nodes and the
// super-root.
func (g *Graph) NumNodes() int { return len(g.start) - 1 }

// NumObjects returns the number of objects, nodes 0..NumObjects()-1.
func (g *Graph) NumObjects() int { return g.numObjects }

// NumRoots returns the number of root nodes.
func (g *Graph) NumRoots() int { return len(g.roots) }

// SuperRoot returns the last node, which points to every root node.
func (g *Graph) SuperRoot() NodeID { return NodeID(len(g.start) - 2) }

// IsObject reports whether node v is an object (not a root node or the
// super-root).
func (g *Graph) IsObject(v NodeID) bool { return int(v) < g.numObjects }

// Succ returns the successors of node v. The caller must not modify them.
func (g *Graph) Succ(v NodeID) []NodeID {
	return g.succ[g.start[v]:g.start[v+1]:g.start[v+1]]
}

// CSR returns the arrays Succ reads: the successors of v are
// succ[start[v]:start[v+1]]. The caller must not modify them.
func (g *Graph) CSR() (start []uint32, succ []NodeID) { return g.start, g.succ }

// Word decodes the pointer-sized word at off of b (object or frame
// contents) in the dump's byte order. It returns 0 when the word is out of
// range or the dump gave no pointer size.
func (g *Graph) Word(b []byte, off int64) uint64 { return g.words.word(b, off) }

// markLive marks every node reachable from the super-root and sums the
// live objects, once, on first use.
func (g *Graph) markLive() {
	g.liveOnce.Do(func() {
		nodes := g.NumNodes()
		g.live = make([]uint64, (nodes+63)/64)
		sr := g.SuperRoot()
		stack := []NodeID{sr}
		g.live[sr/64] |= 1 << (sr % 64)
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, t := range g.Succ(v) {
				if w, b := t/64, uint64(1)<<(t%64); g.live[w]&b == 0 {
					g.live[w] |= b
					stack = append(stack, t)
				}
			}
		}
		for _, gr := range g.idx.groups {
			c := uint64(countBits(g.live, gr.first, gr.first+gr.count))
			g.stats.LiveObjects += c
			g.stats.LiveBytes += c * gr.size
		}
		g.stats.DeadObjects = g.stats.Objects - g.stats.LiveObjects
		g.stats.DeadBytes = g.stats.Bytes - g.stats.LiveBytes
	})
}

// Stats returns totals over the objects. Its live and dead totals are
// found, with Live, by a search of the graph on first use.
func (g *Graph) Stats() Stats {
	g.markLive()
	return g.stats
}

// countBits counts the set bits of bitmap in [from, to).
func countBits(bitmap []uint64, from, to uint32) int {
	c := 0
	for from < to {
		w := from / 64
		word := bitmap[w] >> (from % 64)
		n := 64 - from%64
		if to-from < n {
			n = to - from
			word &= 1<<n - 1
		}
		c += bits.OnesCount64(word)
		from += n
	}
	return c
}

// Live reports whether node v is reachable from a root. The first call
// searches the graph.
func (g *Graph) Live(v NodeID) bool {
	g.markLive()
	return int(v/64) < len(g.live) && g.live[v/64]&(1<<(v%64)) != 0
}

// Find returns the object that contains addr.
func (g *Graph) Find(addr uint64) (NodeID, bool) {
	hint := 0
	v, ok := g.idx.lookup(addr, &hint)
	return NodeID(v), ok
}

// FindStart returns the object that starts at addr, without the search
// for its address that Find and then ObjectAddr take.
func (g *Graph) FindStart(addr uint64) (NodeID, bool) {
	v, ok := g.idx.startsAt(addr)
	return NodeID(v), ok
}

// ObjectAddr returns the address of object v, 0 for other nodes.
func (g *Graph) ObjectAddr(v NodeID) uint64 {
	if int(v) >= g.numObjects {
		return 0
	}
	return g.idx.addr(uint32(v))
}

// Size returns the self size of node v: an object's size, 0 for root nodes
// and the super-root.
func (g *Graph) Size(v NodeID) uint64 {
	if int(v) >= g.numObjects {
		return 0
	}
	return g.idx.groups[g.idx.groupOf(uint32(v))].size
}

// SizeRun returns the run of objects of one size that object v is in:
// objects first to end-1 are all size bytes. A caller that asks for the
// sizes of many objects in order keeps the run and looks up only past it.
// It returns an empty run for a node that is not an object.
func (g *Graph) SizeRun(v NodeID) (first, end NodeID, size uint64) {
	if int(v) >= g.numObjects {
		return v, v, 0
	}
	gr := &g.idx.groups[g.idx.groupOf(uint32(v))]
	return NodeID(gr.first), NodeID(gr.first + gr.count), gr.size
}

// ObjectsOfSize yields the objects of at least min bytes, in order, looking
// only at the runs of objects that large.
func (g *Graph) ObjectsOfSize(min uint64) iter.Seq[NodeID] {
	return func(yield func(NodeID) bool) {
		for _, gr := range g.idx.groups {
			if gr.size < min {
				continue
			}
			for i := gr.first; i < gr.first+gr.count; i++ {
				if !yield(NodeID(i)) {
					return
				}
			}
		}
	}
}

// FillSizes sets dst[v] to Size(v) for every node v < len(dst), in one
// pass over the objects.
func (g *Graph) FillSizes(dst []uint64) {
	for _, gr := range g.idx.groups {
		for i := gr.first; i < gr.first+gr.count && int(i) < len(dst); i++ {
			dst[i] = gr.size
		}
	}
	for i := g.numObjects; i < len(dst); i++ {
		dst[i] = 0
	}
}

// AllocSite returns the memory profile bucket of object v: its allocation
// stack. Objects are sampled at runtime.MemProfileRate; with a rate of 1
// set before the allocations, nearly every object has one.
func (g *Graph) AllocSite(v NodeID) (*Bucket, bool) {
	k, ok := slices.BinarySearchFunc(g.samples, uint32(v), func(s allocSample, i uint32) int { return cmp.Compare(s.obj, i) })
	if !ok {
		return nil, false
	}
	return &g.dump.Buckets[g.samples[k].bucket], true
}
