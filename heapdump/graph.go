package heapdump

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Options configure how the graph's roots are built. The zero value is
// valid: roots are then attributed without help from the binary.
type Options struct {
	// OutArgs returns the size of the arguments area of the function whose
	// entry PC is given (funcInfo.args in the binary's pclntab). A callee's
	// arguments live in its caller's outargs area; with OutArgs, pointer
	// slots there are attributed to the callee frame. Without it, or when
	// it returns ok == false, they stay with the caller, whose root is then
	// marked Unsure.
	OutArgs func(calleeEntryPC uint64) (size int64, ok bool)

	// GlobalSymbol names the global variable holding addr: its symbol and
	// start address. With it there is one root node per global that holds
	// heap pointers; without it, or where it returns ok == false, one per
	// pointer slot.
	GlobalSymbol func(addr uint64) (name string, start uint64, ok bool)

	// Prepare, if set, is called once every record has been read and
	// before the graph is built, so that a caller can check the dump
	// against its binary (and set the binary's load bias) before OutArgs
	// and GlobalSymbol are asked anything. An error from it ends Read.
	Prepare func(d *Dump) error
}

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
// resolve to the enclosing object); those of a root node are the objects
// its slots point into, one per slot, in the order of RootSlots.
type Graph struct {
	dump       *Dump // every record but the objects
	numObjects int
	roots      []Root
	start      []uint32 // node v's successors are succ[start[v]:start[v+1]]
	succ       []NodeID
	stats      Stats

	path      string
	ra        io.ReaderAt
	size      int64
	closer    io.Closer
	words     wordDecoder
	idx       objIndex
	liveOnce  sync.Once
	live      []uint64 // bitmap over nodes
	rootSlots []RootSlot
	samples   []allocSample // sorted by object
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

// Root is a root node of the graph.
type Root struct {
	Kind RootKind // RootFrame, RootGoroutine, RootGlobal, RootFinalizer, RootQueuedFinalizer or RootOther
	// Node is the root's node.
	Node NodeID
	// Goroutine is the index in Dump.Goroutines of a frame or goroutine root's
	// goroutine, else -1.
	Goroutine int
	// Frame is the index in Dump.Frames of the frame a frame root stands for,
	// else -1. Its slots may lie in the caller's frame (its arguments).
	Frame int
	// Unsure is set on a frame root whose callee's arguments could not be
	// told apart from its own slots (no OutArgs, or OutArgs did not know
	// the callee): the root is "frame Frame, or the arguments of its
	// callee, frame Frame-1".
	Unsure bool
	// Segment is the segment of a global root.
	Segment SegmentKind
	// Symbol names a global root when GlobalSymbol did.
	Symbol string
	// Addr is a global root's symbol start (or slot address when it has no
	// symbol), a finalizer root's object, an other root's address.
	Addr uint64
	// Index is the index of a finalizer, queued finalizer or other root in
	// the Dump slice it comes from, else -1.
	Index int
	// Desc is an other root's description.
	Desc string

	slots, slotsEnd uint32
}

// RootSlot is one pointer of a root node: where it is and what it points to.
type RootSlot struct {
	// Frame is the index in Dump.Frames of the frame whose memory holds the
	// slot (the caller's frame for an argument), or -1.
	Frame int
	// Offset is the slot's offset in that frame or in the segment.
	Offset uint64
	// Addr is the slot's address (frame SP or segment address plus
	// offset), or 0 for a field of a record.
	Addr uint64
	// Field names the record field of a non-memory slot: "ctxt" for a
	// goroutine root, "defer" for the closure of a frame's defer record,
	// "object" or "fn" for a finalizer, "addr" for an other root.
	Field string
	Value uint64 // the pointer
	Node  NodeID // the object it points into
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

// Root returns the root that root node v stands for, or nil when v is not
// a root node.
func (g *Graph) Root(v NodeID) *Root {
	i := int(v) - g.numObjects
	if int(v) < g.numObjects || i >= len(g.roots) {
		return nil
	}
	return &g.roots[i]
}

// ForEachRoot calls fn for every root, in node order, until fn returns
// false.
func (g *Graph) ForEachRoot(fn func(r *Root) bool) {
	for i := range g.roots {
		if !fn(&g.roots[i]) {
			return
		}
	}
}

// Word decodes the pointer-sized word at off of b (object or frame
// contents) in the dump's byte order. It returns 0 when the word is out of
// range or the dump gave no pointer size.
func (g *Graph) Word(b []byte, off int64) uint64 { return g.words.word(b, off) }

// Load reads the heap dump at path and builds its graph. The file stays open
// for ObjectRecord and FrameContents until Close.
func Load(path string, opts Options) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	g, err := Read(f, fi.Size(), path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	g.closer = f
	return g, nil
}

// Read reads a heap dump of size bytes from r in one pass and builds its
// graph. name is used in errors. r must stay readable for ObjectRecord.
// Malformed input gives a *FormatError.
func Read(r io.ReaderAt, size int64, name string, opts Options) (*Graph, error) {
	g, err := read(r, size, name, opts, false)
	if err == errGapOverlap {
		// Two spans' objects were taken for one span with free slots,
		// across another span: read again without gaps in groups.
		g, err = read(r, size, name, opts, true)
	}
	return g, err
}

// errGapOverlap says that a group with free slots overlaps another group.
var errGapOverlap = errors.New("heap: a group with gaps overlaps another")

func read(r io.ReaderAt, size int64, name string, opts Options, noGaps bool) (*Graph, error) {
	rd := newReader(r, size, name)
	p := newParser(rd)
	p.idx.noGaps = noGaps
	err := p.run()
	rd.close()
	if err != nil {
		return nil, err
	}
	return build(p, opts)
}

// Close closes the file opened by Load.
func (g *Graph) Close() error {
	if g.closer == nil {
		return nil
	}
	err := g.closer.Close()
	g.closer = nil
	return err
}

// build resolves the parser's raw pointers to objects and adds the roots.
func build(p *parser, opts Options) (*Graph, error) {
	if opts.Prepare != nil {
		if err := opts.Prepare(p.d); err != nil {
			return nil, err
		}
	}
	g := &Graph{
		dump:  p.d,
		path:  p.r.path,
		ra:    p.r.ra,
		size:  p.r.size,
		words: wordDecoder{size: int64(p.ptrSize), order: p.order},
		idx:   p.idx,
	}
	p.r.buf = nil
	if oe := g.idx.finish(); oe != nil {
		if g.idx.gapped && !g.idx.noGaps {
			return nil, errGapOverlap
		}
		return nil, &FormatError{Path: g.path, Offset: oe.file, Record: recordNames[tagObject], Msg: oe.msg()}
	}
	n := int(g.idx.n)
	g.numObjects = n
	g.stats.Objects = uint64(n)
	for _, gr := range g.idx.groups {
		g.stats.Bytes += uint64(gr.count) * gr.size
	}

	// Object edges, resolved and compacted in place, in parallel over
	// ranges of objects.
	var succ []NodeID
	if p.compact {
		// The compacted pointers become the node IDs in place.
		succ = unsafe.Slice((*NodeID)(unsafe.SliceData(p.edges32)), len(p.edges32))
	} else {
		succ = make([]NodeID, len(p.edges64))
	}
	ne := len(succ)
	if ne > maxIndex {
		return nil, fmt.Errorf("%s: %w: more than %d pointers", g.path, ErrTooLarge, maxIndex)
	}
	start := p.starts(n)
	p.edges32 = nil
	parts := resolveParts(start, runtime.GOMAXPROCS(0))
	kept := make([]int, len(parts))
	ends := make([]uint32, len(parts))
	for k, part := range parts {
		ends[k] = start[part.hi]
	}
	var wg sync.WaitGroup
	for k := range parts {
		wg.Go(func() { kept[k] = g.resolve(p, start, succ, parts[k], ends[k]) })
	}
	wg.Wait()
	p.edges64 = nil
	// Close the gaps the dropped pointers left between parts.
	w := uint32(0)
	for k, part := range parts {
		from := start[part.lo]
		if delta := from - w; delta != 0 {
			copy(succ[w:], succ[from:from+uint32(kept[k])])
			for i := part.lo; i < part.hi; i++ {
				start[i] -= delta
			}
		}
		w += uint32(kept[k])
	}
	start[n] = w
	g.stats.Edges = uint64(w)
	g.stats.Dangling = uint64(ne) - uint64(w)
	g.start = start
	g.succ = succ[:w]
	// Make room for the roots' edges now rather than by append's growth.
	d := g.dump
	rootEdges := len(p.slots) + len(d.Goroutines) + len(d.Defers) + 3*(len(d.Finalizers)+len(d.QueuedFinalizers)) + 2*len(d.OtherRoots) + len(d.Frames)
	for _, s := range d.Segments {
		rootEdges += 2 * len(s.PtrOffsets)
	}
	if cap(g.succ)-len(g.succ) < rootEdges {
		g.succ = append(make([]NodeID, 0, len(g.succ)+rootEdges), g.succ...)
	}

	if err := g.addRoots(p, opts); err != nil {
		return nil, err
	}
	g.resolveSamples(p.samples)
	return g, nil
}

// starts returns the CSR start array of the n objects, from their edge
// counts: start[i] is the index of object i's first edge, start[n] the
// number of edges. It has room for the root nodes and the super-root.
func (p *parser) starts(n int) []uint32 {
	roots := len(p.d.Frames) + len(p.d.Goroutines) + len(p.d.Finalizers) + len(p.d.QueuedFinalizers) + len(p.d.OtherRoots)
	for _, s := range p.d.Segments {
		roots += len(s.PtrOffsets)
	}
	start := make([]uint32, n+1, n+roots+2)
	acc, b := uint32(0), 0
	for i, c := range p.counts {
		start[i] = acc
		if c < 255 {
			acc += uint32(c)
		} else {
			acc += p.big[b].n
			b++
		}
	}
	start[n] = acc
	p.counts, p.big = nil, nil
	return start
}

// parallelMinEdges is the number of edges from which they are resolved in
// parallel; tests lower it.
var parallelMinEdges = 1 << 16

// objRange is a range [lo, hi) of objects.
type objRange struct{ lo, hi int }

// resolveParts splits the objects into up to k ranges of about the same
// number of edges.
func resolveParts(start []uint32, k int) []objRange {
	n := len(start) - 1
	total := int(start[n])
	if k < 1 || total < parallelMinEdges {
		k = 1
	}
	var parts []objRange
	lo := 0
	for j := 1; j <= k && lo < n; j++ {
		hi := n
		if j < k {
			target := uint32(total / k * j)
			hi, _ = slices.BinarySearch(start[:n+1], target)
			hi = max(hi, lo)
		}
		parts = append(parts, objRange{lo, hi})
		lo = hi
	}
	if len(parts) == 0 {
		parts = append(parts, objRange{0, n})
	}
	return parts
}

// resolve replaces the raw pointers of the objects in part by the objects
// they point into, dropping the ones that point into none. The kept edges
// of the part are packed from its first edge on and start is updated; it
// returns how many it kept. end is start[part.hi], which belongs to the
// next part.
func (g *Graph) resolve(p *parser, start []uint32, succ []NodeID, part objRange, end uint32) int {
	hint := 0
	lo, shift := p.arenaLo, p.shift
	w := start[part.lo]
	first := w
	for i := part.lo; i < part.hi; i++ {
		s, e := start[i], end
		if i+1 < part.hi {
			e = start[i+1]
		}
		start[i] = w
		for j := s; j < e; j++ {
			var addr uint64
			if p.compact {
				addr = lo + uint64(succ[j])<<shift
			} else {
				addr = p.edges64[j]
			}
			if t, ok := g.idx.lookup(addr, &hint); ok {
				succ[w] = NodeID(t)
				w++
			}
		}
	}
	return int(w - first)
}

// addRoots appends the root nodes and the super-root.
func (g *Graph) addRoots(p *parser, opts Options) error {
	hint := 0
	// slot resolves v and, if it points into an object, records the slot
	// for the root being built.
	slot := func(s RootSlot) {
		if t, ok := g.idx.lookup(s.Value, &hint); ok {
			s.Node = NodeID(t)
			g.rootSlots = append(g.rootSlots, s)
		}
	}
	// finish closes the root whose slots were added since first.
	finish := func(r Root, first int) {
		if len(g.rootSlots) == first {
			return
		}
		r.slots, r.slotsEnd = uint32(first), uint32(len(g.rootSlots))
		r.Node = NodeID(g.numObjects + len(g.roots))
		g.roots = append(g.roots, r)
	}

	// The closures of defers that are not open-coded (a defer in a loop,
	// or any defer under -race) live in defer records, which the stack
	// maps leave out (the runtime scans them apart): they belong to the
	// frame that deferred them, whose SP the record gives.
	dump := g.dump
	defers := map[uint64][]Defer{}
	for _, d := range dump.Defers {
		if d.Fn != 0 {
			defers[d.G] = append(defers[d.G], d)
		}
	}

	mf := dump.Params.minFrameSize()
	for gi := range dump.Goroutines {
		gr := &dump.Goroutines[gi]
		frames := dump.Frames[gr.FirstFrame : gr.FirstFrame+gr.NumFrames]
		// args[d] is the size of the arguments of frame d-1 (the callee),
		// which lie in frame d at [mf, mf+args[d]); -1 if unknown.
		args := make([]int64, len(frames))
		for d := range frames {
			args[d] = -1
			if d > 0 && opts.OutArgs != nil {
				if sz, ok := opts.OutArgs(frames[d-1].Entry); ok && sz >= 0 {
					args[d] = sz
				}
			}
		}
		inArgs := func(d int, off uint64) bool {
			return args[d] >= 0 && off >= mf && off-mf < uint64(args[d])
		}
		for d := range frames {
			fi := gr.FirstFrame + d
			first := len(g.rootSlots)
			for _, s := range frames[d].Slots {
				if d > 0 && inArgs(d, s.Offset) {
					continue // the callee's
				}
				slot(RootSlot{Frame: fi, Offset: s.Offset, Addr: frames[d].SP + s.Offset, Value: s.Value})
			}
			if d+1 < len(frames) {
				for _, s := range frames[d+1].Slots {
					if inArgs(d+1, s.Offset) {
						slot(RootSlot{Frame: fi + 1, Offset: s.Offset, Addr: frames[d+1].SP + s.Offset, Value: s.Value})
					}
				}
			}
			for _, def := range defers[gr.Addr] {
				if def.SP == frames[d].SP {
					slot(RootSlot{Frame: -1, Field: "defer", Value: def.Fn})
				}
			}
			finish(Root{Kind: RootFrame, Goroutine: gi, Frame: fi, Unsure: d > 0 && args[d] < 0, Index: -1}, first)
		}
		if gr.Ctxt != 0 {
			first := len(g.rootSlots)
			slot(RootSlot{Frame: -1, Field: "ctxt", Value: gr.Ctxt})
			finish(Root{Kind: RootGoroutine, Goroutine: gi, Frame: -1, Index: -1}, first)
		}
	}

	ps := uint64(p.ptrSize)
	for _, seg := range dump.Segments {
		cur := Root{Kind: RootGlobal, Goroutine: -1, Frame: -1, Index: -1, Segment: seg.Kind}
		first := len(g.rootSlots)
		named := false
		for _, o := range seg.PtrOffsets {
			v := p.word(seg.Contents[o : o+ps])
			if _, ok := g.idx.lookup(v, &hint); !ok {
				continue
			}
			addr := seg.Addr + o
			var name string
			var symStart uint64
			ok := false
			if opts.GlobalSymbol != nil {
				name, symStart, ok = opts.GlobalSymbol(addr)
			}
			if !ok || !named || name != cur.Symbol || symStart != cur.Addr {
				finish(cur, first)
				first = len(g.rootSlots)
				cur.Symbol, cur.Addr, named = "", addr, ok
				if ok {
					cur.Symbol, cur.Addr = name, symStart
				}
			}
			slot(RootSlot{Frame: -1, Offset: o, Addr: addr, Value: v})
		}
		finish(cur, first)
	}

	for _, k := range []RootKind{RootFinalizer, RootQueuedFinalizer} {
		fins := dump.Finalizers
		if k == RootQueuedFinalizer {
			fins = dump.QueuedFinalizers
		}
		for i, f := range fins {
			first := len(g.rootSlots)
			slot(RootSlot{Frame: -1, Field: "object", Value: f.Object})
			slot(RootSlot{Frame: -1, Field: "fn", Value: f.Fn})
			finish(Root{Kind: k, Goroutine: -1, Frame: -1, Index: i, Addr: f.Object}, first)
		}
	}
	for i, o := range dump.OtherRoots {
		first := len(g.rootSlots)
		slot(RootSlot{Frame: -1, Field: "addr", Value: o.Addr})
		finish(Root{Kind: RootOther, Goroutine: -1, Frame: -1, Index: i, Addr: o.Addr, Desc: o.Desc}, first)
	}

	// Node and edge counts must fit the uint32 indices.
	nodes := uint64(g.numObjects) + uint64(len(g.roots)) + 1
	edges := uint64(len(g.succ)) + uint64(len(g.rootSlots)) + uint64(len(g.roots))
	if nodes > maxIndex || edges > maxIndex {
		return fmt.Errorf("%s: %w: %d nodes, %d edges", g.path, ErrTooLarge, nodes, edges)
	}
	for _, r := range g.roots {
		for _, s := range g.rootSlots[r.slots:r.slotsEnd] {
			g.succ = append(g.succ, s.Node)
		}
		g.start = append(g.start, uint32(len(g.succ)))
	}
	for i := range g.roots {
		g.succ = append(g.succ, NodeID(g.numObjects+i))
	}
	g.start = append(g.start, uint32(len(g.succ)))
	return nil
}

// RootSlots returns the slots of root node v, parallel to its successors,
// or nil when v is not a root node. The caller must not modify them.
func (g *Graph) RootSlots(v NodeID) []RootSlot {
	r := g.Root(v)
	if r == nil {
		return nil
	}
	return g.rootSlots[r.slots:r.slotsEnd:r.slotsEnd]
}

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

// resolveSamples links alloc samples to objects and buckets.
func (g *Graph) resolveSamples(raw []sample) {
	if len(raw) == 0 {
		return
	}
	byAddr := make(map[uint64]uint32, len(g.dump.Buckets))
	for i, b := range g.dump.Buckets {
		byAddr[b.Addr] = uint32(i)
	}
	hint := 0
	for _, s := range raw {
		obj, ok := g.idx.lookup(s.obj, &hint)
		if !ok {
			continue
		}
		b, ok := byAddr[s.bucket]
		if !ok {
			continue
		}
		g.samples = append(g.samples, allocSample{obj: obj, bucket: b})
	}
	slices.SortFunc(g.samples, func(a, b allocSample) int { return cmp.Compare(a.obj, b.obj) })
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
