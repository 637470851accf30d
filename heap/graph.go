package heap

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
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

	// liveLater leaves the live set and the live totals of Stats to the
	// caller, who finds them anyway (Analyze, with its dominator tree) and
	// then calls setLive.
	liveLater bool
}

// Graph is the object graph of a heap dump, in compressed sparse row form
// ready for a dominator computation.
//
// Nodes are numbered: objects 0..NumObjects-1 in dump order, then the root
// nodes NumObjects..NumObjects+len(Roots)-1 in the order of Roots, then the
// super-root, which is the last node and points to every root node. The
// successors of node v are Succ[Start[v]:Start[v+1]]; an object's are the
// objects its pointer fields point into (interior pointers resolve to the
// enclosing object), a root node's are the objects its slots point into,
// one per slot, in the order of RootSlots.
type Graph struct {
	*Dump // every record but the objects

	NumObjects int      // objects: nodes 0..NumObjects-1
	Roots      []Root   // root nodes: node NumObjects+i is Roots[i]
	SuperRoot  uint32   // the last node, NumObjects+len(Roots)
	Start      []uint32 // len NumObjects+len(Roots)+2: node v's successors are Succ[Start[v]:Start[v+1]]
	Succ       []uint32

	// Totals over the whole dump. Live means reachable from a root; the
	// rest are dead objects and the fake objects the runtime writes for the
	// unused tail of spans, which only reachability tells apart from live.
	Stats Stats

	path      string
	ra        io.ReaderAt
	size      int64
	closer    io.Closer
	params    *parser // ptrSize and byte order, for re-reading records
	idx       objIndex
	live      []uint64 // bitmap over nodes
	rootSlots []RootSlot
	samples   []allocSample // sorted by object
}

// Stats are totals over the objects of a dump.
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

// RootKind says what a root node stands for.
type RootKind uint8

const (
	RootFrame           RootKind = iota + 1 // a goroutine stack frame
	RootGoroutine                           // a goroutine's saved closure context (sched.ctxt)
	RootGlobal                              // a global in the data or bss segment
	RootFinalizer                           // an object with a finalizer, and the finalizer
	RootQueuedFinalizer                     // a finalizer queued to run, with its object
	RootOther                               // an "other root" record
)

func (k RootKind) String() string {
	switch k {
	case RootFrame:
		return "frame"
	case RootGoroutine:
		return "goroutine"
	case RootGlobal:
		return "global"
	case RootFinalizer:
		return "finalizer"
	case RootQueuedFinalizer:
		return "queued finalizer"
	case RootOther:
		return "other"
	}
	return "unknown"
}

// Root is a root node of the graph.
type Root struct {
	Kind RootKind
	// Goroutine is the index in Goroutines of a frame or goroutine root's
	// goroutine, else -1.
	Goroutine int
	// Frame is the index in Frames of the frame a frame root stands for,
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
	// Frame is the index in Frames of the frame whose memory holds the
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
	Node  uint32 // the object it points into
}

type allocSample struct{ obj, bucket uint32 }

// Load reads the heap dump at path and builds its graph. The file stays open
// for ObjectRecord until Close.
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
		Dump:   p.d,
		path:   p.r.path,
		ra:     p.r.ra,
		size:   p.r.size,
		params: &parser{ptrSize: p.ptrSize, order: p.order, haveParams: p.haveParams, le64: p.le64},
		idx:    p.idx,
	}
	p.r.buf = nil
	if oe := g.idx.finish(); oe != nil {
		if g.idx.gapped && !g.idx.noGaps {
			return nil, errGapOverlap
		}
		return nil, &FormatError{Path: g.path, Offset: oe.file, Record: recordNames[tagObject], Msg: oe.msg()}
	}
	n := int(g.idx.n)
	g.NumObjects = n
	g.Stats.Objects = uint64(n)

	// Object edges, resolved and compacted in place, in parallel over
	// ranges of objects.
	var succ []uint32
	if p.compact {
		succ = p.edges32
	} else {
		succ = make([]uint32, len(p.edges64))
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
	g.Stats.Edges = uint64(w)
	g.Stats.Dangling = uint64(ne) - uint64(w)
	g.Start = start
	g.Succ = succ[:w]
	// Make room for the roots' edges now rather than by append's growth.
	rootEdges := len(p.slots) + len(g.Goroutines) + len(g.Defers) + 3*(len(g.Finalizers)+len(g.QueuedFinalizers)) + 2*len(g.OtherRoots) + len(g.Frames)
	for _, s := range g.Segments {
		rootEdges += 2 * len(s.PtrOffsets)
	}
	if cap(g.Succ)-len(g.Succ) < rootEdges {
		g.Succ = append(make([]uint32, 0, len(g.Succ)+rootEdges), g.Succ...)
	}

	if err := g.addRoots(p, opts); err != nil {
		return nil, err
	}
	g.resolveSamples(p.samples)
	if !opts.liveLater {
		g.markLive()
	}
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
func (g *Graph) resolve(p *parser, start, succ []uint32, part objRange, end uint32) int {
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
				succ[w] = t
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
			s.Node = t
			g.rootSlots = append(g.rootSlots, s)
		}
	}
	// finish closes the root whose slots were added since first.
	finish := func(r Root, first int) {
		if len(g.rootSlots) == first {
			return
		}
		r.slots, r.slotsEnd = uint32(first), uint32(len(g.rootSlots))
		g.Roots = append(g.Roots, r)
	}

	// The closures of defers that are not open-coded (a defer in a loop,
	// or any defer under -race) live in defer records, which the stack
	// maps leave out (the runtime scans them apart): they belong to the
	// frame that deferred them, whose SP the record gives.
	defers := map[uint64][]Defer{}
	for _, d := range g.Defers {
		if d.Fn != 0 {
			defers[d.G] = append(defers[d.G], d)
		}
	}

	mf := g.Params.minFrameSize()
	for gi := range g.Goroutines {
		gr := &g.Goroutines[gi]
		frames := g.Frames[gr.FirstFrame : gr.FirstFrame+gr.NumFrames]
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
	for _, seg := range g.Segments {
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
		fins := g.Finalizers
		if k == RootQueuedFinalizer {
			fins = g.QueuedFinalizers
		}
		for i, f := range fins {
			first := len(g.rootSlots)
			slot(RootSlot{Frame: -1, Field: "object", Value: f.Object})
			slot(RootSlot{Frame: -1, Field: "fn", Value: f.Fn})
			finish(Root{Kind: k, Goroutine: -1, Frame: -1, Index: i, Addr: f.Object}, first)
		}
	}
	for i, o := range g.OtherRoots {
		first := len(g.rootSlots)
		slot(RootSlot{Frame: -1, Field: "addr", Value: o.Addr})
		finish(Root{Kind: RootOther, Goroutine: -1, Frame: -1, Index: i, Addr: o.Addr, Desc: o.Desc}, first)
	}

	// Node and edge counts must fit the uint32 indices.
	nodes := uint64(g.NumObjects) + uint64(len(g.Roots)) + 1
	edges := uint64(len(g.Succ)) + uint64(len(g.rootSlots)) + uint64(len(g.Roots))
	if nodes > maxIndex || edges > maxIndex {
		return fmt.Errorf("%s: %w: %d nodes, %d edges", g.path, ErrTooLarge, nodes, edges)
	}
	for _, r := range g.Roots {
		for _, s := range g.rootSlots[r.slots:r.slotsEnd] {
			g.Succ = append(g.Succ, s.Node)
		}
		g.Start = append(g.Start, uint32(len(g.Succ)))
	}
	g.SuperRoot = uint32(nodes - 1)
	for i := range g.Roots {
		g.Succ = append(g.Succ, uint32(g.NumObjects+i))
	}
	g.Start = append(g.Start, uint32(len(g.Succ)))
	return nil
}

// RootSlots returns the slots of Roots[i], parallel to the successors of
// its node.
func (g *Graph) RootSlots(i int) []RootSlot {
	r := &g.Roots[i]
	return g.rootSlots[r.slots:r.slotsEnd:r.slotsEnd]
}

// markLive marks every node reachable from the super-root and sums the
// live objects.
func (g *Graph) markLive() {
	nodes := len(g.Start) - 1
	g.live = make([]uint64, (nodes+63)/64)
	stack := []uint32{g.SuperRoot}
	g.live[g.SuperRoot/64] |= 1 << (g.SuperRoot % 64)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, t := range g.Succ[g.Start[v]:g.Start[v+1]] {
			if w, b := t/64, uint64(1)<<(t%64); g.live[w]&b == 0 {
				g.live[w] |= b
				stack = append(stack, t)
			}
		}
	}
	g.countLive()
}

// setLive sets the live set, for a graph loaded with liveLater, from a
// dominator tree of the graph from the super-root: a node is live when the
// tree reaches it.
func (g *Graph) setLive(t *dom.Tree) {
	nodes := len(g.Start) - 1
	g.live = make([]uint64, (nodes+63)/64)
	for v := range uint32(nodes) {
		if t.Reachable(v) {
			g.live[v/64] |= 1 << (v % 64)
		}
	}
	g.countLive()
}

// countLive sums the live objects and bytes of Stats from the live set.
func (g *Graph) countLive() {
	for _, gr := range g.idx.groups {
		c := uint64(countBits(g.live, gr.first, gr.first+gr.count))
		g.Stats.LiveObjects += c
		g.Stats.LiveBytes += c * gr.size
		g.Stats.Bytes += uint64(gr.count) * gr.size
	}
	g.Stats.DeadObjects = g.Stats.Objects - g.Stats.LiveObjects
	g.Stats.DeadBytes = g.Stats.Bytes - g.Stats.LiveBytes
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

// Live reports whether node v is reachable from a root.
func (g *Graph) Live(v uint32) bool {
	return int(v/64) < len(g.live) && g.live[v/64]&(1<<(v%64)) != 0
}

// Find returns the object that contains addr.
func (g *Graph) Find(addr uint64) (uint32, bool) {
	hint := 0
	return g.idx.lookup(addr, &hint)
}

// ObjectAddr returns the address of object i.
func (g *Graph) ObjectAddr(i uint32) uint64 {
	if int(i) >= g.NumObjects {
		return 0
	}
	return g.idx.addr(i)
}

// NodeSize returns the self size of node v: an object's size, 0 for root
// nodes and the super-root.
func (g *Graph) NodeSize(v uint32) uint64 {
	if int(v) >= g.NumObjects {
		return 0
	}
	return g.idx.groups[g.idx.groupOf(v)].size
}

// objectsOfSize yields the objects of at least min bytes, in order, looking
// only at the groups of objects that large.
func (g *Graph) objectsOfSize(min uint64) iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for _, gr := range g.idx.groups {
			if gr.size < min {
				continue
			}
			for i := gr.first; i < gr.first+gr.count; i++ {
				if !yield(i) {
					return
				}
			}
		}
	}
}

// FillNodeSizes sets dst[v] to NodeSize(v) for every node v < len(dst),
// in one pass over the objects.
func (g *Graph) FillNodeSizes(dst []uint64) {
	for _, gr := range g.idx.groups {
		for i := gr.first; i < gr.first+gr.count && int(i) < len(dst); i++ {
			dst[i] = gr.size
		}
	}
	for i := g.NumObjects; i < len(dst); i++ {
		dst[i] = 0
	}
}

// resolveSamples links alloc samples to objects and buckets.
func (g *Graph) resolveSamples(raw []sample) {
	if len(raw) == 0 {
		return
	}
	byAddr := make(map[uint64]uint32, len(g.Buckets))
	for i, b := range g.Buckets {
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

// AllocSite returns the memory profile bucket of object i: its allocation
// stack. Objects are sampled at runtime.MemProfileRate; with a rate of 1
// set before the allocations, nearly every object has one.
func (g *Graph) AllocSite(i uint32) (*Bucket, bool) {
	k, ok := slices.BinarySearchFunc(g.samples, i, func(s allocSample, i uint32) int { return cmp.Compare(s.obj, i) })
	if !ok {
		return nil, false
	}
	return &g.Buckets[g.samples[k].bucket], true
}
