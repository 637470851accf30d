package heapdump

import (
	"cmp"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ctxleak/ctxleak/internal/bigarray"
	"github.com/ctxleak/ctxleak/internal/recent"
)

// build resolves the parser's raw pointers to objects and adds the roots.
func build(p *parser, opts Options) (g *Graph, err error) {
	// The start of each object's edges comes from the counts alone: on the
	// other core, while this one checks the binary and finishes the index.
	startc := make(chan []uint32, 1)
	go func() { startc <- p.starts(int(p.idx.n)) }()
	defer func() {
		if startc != nil {
			<-startc // an error returned first
		}
	}()
	if opts.Prepare != nil {
		if err := opts.Prepare(p.d); err != nil {
			return nil, err
		}
	}
	if opts.Check != nil {
		// Its error comes first, as if it had run before the build.
		checked := make(chan error, 1)
		go func() { checked <- opts.Check(p.d) }()
		defer func() {
			if cerr := <-checked; cerr != nil {
				g, err = nil, cerr
			}
		}()
	}
	g = &Graph{
		dump:  p.d,
		path:  p.r.path,
		ra:    p.r.ra,
		size:  p.r.size,
		words: wordDecoder{size: int64(p.ptrSize), order: p.order},
		src:   p.source(),
		idx:   p.idx,
	}
	p.r.release()
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

	// The roots' edges go after the objects': room for them, so that they
	// are not appended by growing the whole array, a copy the collector
	// cannot interrupt (10M nodes: 0.13 s, and as long spinning on the
	// other core in a collection that waits for it).
	d := g.dump
	rootEdges := len(p.slots) + len(d.Goroutines) + len(d.Defers) + 2*len(d.Panics) + 3*(len(d.Finalizers)+len(d.QueuedFinalizers)) + 2*len(d.OtherRoots) + len(d.Frames)
	for _, s := range d.Segments {
		rootEdges += 2 * len(s.PtrOffsets)
	}

	// Object edges, resolved and compacted in place, in parallel over
	// ranges of objects.
	var succ []NodeID
	if p.compact {
		// The compacted pointers become the node IDs in place, with the
		// room the parser's growth left after them.
		succ = unsafe.Slice((*NodeID)(unsafe.SliceData(p.edges32)), cap(p.edges32))[:len(p.edges32)]
	} else {
		succ = make([]NodeID, len(p.edges64), len(p.edges64)+rootEdges)
	}
	ne := len(succ)
	if ne > maxIndex {
		return nil, fmt.Errorf("%s: %w: more than %d pointers", g.path, ErrTooLarge, maxIndex)
	}
	start := <-startc
	startc = nil
	p.edges32 = nil
	// Parts of equal edges do not take equal time (pointers that jump
	// around the heap miss the caches): more parts than cores, which take
	// the next part as they finish one.
	procs := runtime.GOMAXPROCS(0)
	parts := resolveParts(start, partsPerCore*procs)
	kept := make([]int, len(parts))
	ends := make([]uint32, len(parts))
	for k, part := range parts {
		ends[k] = start[part.hi]
	}
	g.pointedInto = make([]uint64, (n+63)/64)
	var wg sync.WaitGroup
	var next atomic.Int64
	for range min(procs, len(parts)) {
		wg.Go(func() {
			for k := int(next.Add(1) - 1); k < len(parts); k = int(next.Add(1) - 1) {
				kept[k] = g.resolve(p, start, succ, parts[k], ends[k])
			}
		})
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
	// Make room for the roots' edges now, if the parser left too little,
	// rather than by append's growth.
	if cap(g.succ)-len(g.succ) < rootEdges {
		g.succ = bigarray.Grow(g.succ, len(g.succ)+rootEdges)
	}

	if err := g.addRoots(p, opts); err != nil {
		return nil, err
	}
	g.cutRuntimeEdges()
	g.resolveSamples(p.samples)
	return g, nil
}

// starts returns the CSR start array of the n objects, from their edge
// counts: start[i] is the index of object i's first edge, start[n] the
// number of edges. It has room for the root nodes and the super-root.
func (p *parser) starts(n int) []uint32 {
	roots := len(p.d.Frames) + len(p.d.Goroutines) + len(p.d.Panics) + len(p.d.Finalizers) + len(p.d.QueuedFinalizers) + len(p.d.OtherRoots)
	for _, s := range p.d.Segments {
		roots += len(s.PtrOffsets)
	}
	start := make([]uint32, n+1, n+roots+2)
	// One call has the kernel fault in the pages, rather than a fault each
	// as the loop first writes them (10M nodes: the build waited 14 to 16
	// ms for the array, and 1 to 3 ms so, in most runs).
	bigarray.Populate(start[:cap(start)])
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

// partsPerCore is the number of parts of the objects per core whose edges
// are resolved in parallel.
const partsPerCore = 8

// objRange is a range [lo, hi) of objects.
type objRange struct{ lo, hi int }

// resolveParts splits the objects into up to k ranges of about the same
// number of edges, none empty: an empty range would read the start of the
// next while that range's worker writes it.
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
		}
		if hi > lo {
			parts = append(parts, objRange{lo, hi})
			lo = hi
		}
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
				// hint is now the entry of t: note a pointer deep into a
				// large object, which findTimers needs of a P.
				if e := &g.idx.entries[hint]; e.size >= minPSize && (addr-e.base)%e.size >= minTimersOffset {
					atomic.OrUint64(&g.pointedInto[t/64], 1<<(t%64))
				}
			}
		}
	}
	return int(w - first)
}

// maxArgSizes bounds the functions addRoots remembers the argument size of.
const maxArgSizes = 1 << 16

// addRoots appends the root nodes and the super-root.
func (g *Graph) addRoots(p *parser, opts Options) error {
	hint := 0
	// slot resolves v and, if it points into an object, records the slot
	// for the root being built.
	slot := func(s RootSlot) {
		if t, ok := g.idx.lookup(s.Value, &hint); ok {
			s.Node = NodeID(t)
			g.rootSlots = appendInSteps(g.rootSlots, s)
		}
	}
	// finish closes the root whose slots were added since first.
	finish := func(r Root, first int) {
		if len(g.rootSlots) == first {
			return
		}
		r.slots, r.slotsEnd = uint32(first), uint32(len(g.rootSlots))
		r.Node = NodeID(g.numObjects + len(g.roots))
		g.roots = appendInSteps(g.roots, r)
	}

	// The closures of defers that are not open-coded (a defer in a loop,
	// or any defer under -race) live in defer records, which the stack
	// maps leave out (the runtime scans them apart): they belong to the
	// frame that deferred them, whose SP the record gives, as slots of
	// its root (package heap names the holder "a defer" when a path
	// starts there).
	// The value of a panic in progress is a root of its goroutine.
	dump := g.dump
	// Nearly every frame slot points into an object: room for them all
	// and one slot of every other record, rather than append's copies
	// (100,000 goroutines: 400,000 slots, 0.17 s of copying).
	// A goroutine is a root, of one slot, only when it has a closure to
	// start (ctxt): room for a million others would be zeroed, and so
	// resident, when the array takes memory the collector freed.
	withCtxt := 0
	for i := range dump.Goroutines {
		if dump.Goroutines[i].Ctxt != 0 {
			withCtxt++
		}
	}
	// The globals' slots are those of their pointer words that point into
	// an object, counted here so that the arrays need not grow for them:
	// past the frames of 100,000 goroutines, growing for a few dozen
	// globals copied 29 MB of slots into 36 MB of fresh memory.
	globals := 0
	for _, seg := range dump.Segments {
		for _, v := range seg.values {
			if _, ok := g.idx.lookup(v, &hint); ok {
				globals++
			}
		}
	}
	g.rootSlots = make([]RootSlot, 0, len(p.slots)+withCtxt+len(dump.Defers)+2*len(dump.Panics)+
		2*(len(dump.Finalizers)+len(dump.QueuedFinalizers))+len(dump.OtherRoots)+globals)
	// Room for every root there can be: a frame's, if it has slots or
	// defers, one of every other record, and one for each global slot at
	// most. The parser counted the frames with slots: a pass over them
	// here missed the cache on each (100,000 goroutines: 4 ms).
	g.roots = make([]Root, 0, dump.withSlots+len(dump.Defers)+withCtxt+len(dump.Panics)+
		len(dump.Finalizers)+len(dump.QueuedFinalizers)+len(dump.OtherRoots)+globals)
	// The other core, idle meanwhile, faults in the arrays' pages ahead of
	// the loop below (100,000 goroutines: 48 MB). The budget counted the
	// room for a slot of every frame slot, and a root of every frame.
	var populating sync.WaitGroup
	defer populating.Wait()
	if slots := g.rootSlots[:cap(g.rootSlots)]; unsafe.Sizeof(RootSlot{})*uintptr(len(slots)) >= populateRoomMin {
		populateAsync(&populating, slots)
	}
	if roots := g.roots[:cap(g.roots)]; unsafe.Sizeof(Root{})*uintptr(len(roots)) >= populateRoomMin {
		populateAsync(&populating, roots)
	}
	defers := deferIndex(dump.Defers)
	panics := panicIndex(dump.Panics)

	mf := dump.Params.minFrameSize()
	stackObjs := &stackObjectCache{fn: opts.StackObjects}
	// outArgs is opts.OutArgs, -1 for unknown, asked once per function
	// (of the first maxArgSizes): 100,000 goroutines have 600,000 frames
	// of a few functions.
	argSizes := map[uint64]int64{}
	var recentArgs recent.Cache[uint64, int64] // in front of argSizes
	outArgs := func(entry uint64) int64 {
		if sz, ok := recentArgs.Get(recent.Hash(entry), entry); ok {
			return sz
		}
		sz, ok := argSizes[entry]
		if !ok {
			sz = -1
			if n, ok := opts.OutArgs(entry); ok && n >= 0 {
				sz = n
			}
			if len(argSizes) < maxArgSizes {
				argSizes[entry] = sz
			}
		}
		recentArgs.Put(recent.Hash(entry), entry, sz)
		return sz
	}
	stackBudget := maxStackObjectWords
	var args []int64
	for gi := range dump.Goroutines {
		gr := &dump.Goroutines[gi]
		frames := dump.Frames[gr.FirstFrame : gr.FirstFrame+gr.NumFrames]
		objSlots := g.stackObjectSlots(gi, frames, gr.FirstFrame, defers, stackObjs, &stackBudget)
		grPanics := panics[gr.Addr] // with a value
		// args[d] is the size of the arguments of frame d-1 (the callee),
		// which lie in frame d at [mf, mf+args[d]); -1 if unknown.
		args = slices.Grow(args[:0], len(frames))[:len(frames)]
		for d := range frames {
			args[d] = -1
			if d > 0 && opts.OutArgs != nil {
				args[d] = outArgs(frames[d-1].Entry)
			}
		}
		inArgs := func(d int, off uint64) bool {
			return args[d] >= 0 && off >= mf && off-mf < uint64(args[d])
		}
		for d := range frames {
			fi := gr.FirstFrame + d
			first := len(g.rootSlots)
			for _, s := range dump.FrameSlots(fi) {
				if d > 0 && inArgs(d, s.Offset) {
					continue // the callee's
				}
				if isPanicValue(dump.Panics, grPanics, frames[d].SP+s.Offset, s.Value, p.ptrSize) {
					continue // the panic's root holds it
				}
				slot(RootSlot{Frame: fi, Offset: s.Offset, Addr: frames[d].SP + s.Offset, Value: s.Value})
			}
			if d+1 < len(frames) {
				for _, s := range dump.FrameSlots(fi + 1) {
					if inArgs(d+1, s.Offset) {
						slot(RootSlot{Frame: fi + 1, Offset: s.Offset, Addr: frames[d+1].SP + s.Offset, Value: s.Value})
					}
				}
			}
			for len(objSlots) > 0 && objSlots[0].owner == d {
				if os := objSlots[0].slot; !isPanicValue(dump.Panics, grPanics, os.Addr, os.Value, p.ptrSize) {
					slot(os) // else the panic's root holds it
				}
				objSlots = objSlots[1:]
			}
			for _, dc := range defers.of(gr.Addr, frames[d].SP) {
				// The record itself when it is an object (a defer in a
				// loop, or under -race), which holds the closure; else
				// the closure.
				if rec, ok := g.idx.lookup(dc.addr, &hint); ok {
					slot(RootSlot{Frame: -1, Field: FieldRecord, Value: dc.addr})
					g.deferRecs = append(g.deferRecs, NodeID(rec))
				} else if dc.fn != 0 {
					slot(RootSlot{Frame: -1, Field: FieldDefer, Value: dc.fn})
				}
			}
			finish(Root{Kind: RootFrame, Goroutine: gi, Frame: fi, Unsure: d > 0 && args[d] < 0, Index: -1}, first)
		}
		for _, i := range grPanics {
			first := len(g.rootSlots)
			slot(RootSlot{Frame: -1, Field: FieldValue, Value: dump.Panics[i].Data})
			finish(Root{Kind: RootPanic, Goroutine: gi, Frame: -1, Index: i}, first)
		}
		if gr.Ctxt != 0 {
			first := len(g.rootSlots)
			slot(RootSlot{Frame: -1, Field: FieldCtxt, Value: gr.Ctxt})
			finish(Root{Kind: RootGoroutine, Goroutine: gi, Frame: -1, Index: -1}, first)
		}
	}

	for _, seg := range dump.Segments {
		cur := Root{Kind: RootGlobal, Goroutine: -1, Frame: -1, Index: -1, Segment: seg.Kind}
		curName := "" // its symbol
		first := len(g.rootSlots)
		named := false
		for i, o := range seg.PtrOffsets {
			v := seg.values[i]
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
			if !ok || !named || name != curName || symStart != cur.Addr {
				g.nameRoot(&cur, curName)
				finish(cur, first)
				first = len(g.rootSlots)
				curName, cur.Addr, named = "", addr, ok
				if ok {
					curName, cur.Addr = name, symStart
				}
			}
			slot(RootSlot{Frame: -1, Offset: o, Addr: addr, Value: v})
		}
		g.nameRoot(&cur, curName)
		finish(cur, first)
	}

	for _, k := range []RootKind{RootFinalizer, RootQueuedFinalizer} {
		fins := dump.Finalizers
		if k == RootQueuedFinalizer {
			fins = dump.QueuedFinalizers
		}
		for i, f := range fins {
			first := len(g.rootSlots)
			slot(RootSlot{Frame: -1, Field: FieldObject, Value: f.Object})
			slot(RootSlot{Frame: -1, Field: FieldFn, Value: f.Fn})
			finish(Root{Kind: k, Goroutine: -1, Frame: -1, Index: i, Addr: f.Object}, first)
		}
	}
	for i, o := range dump.OtherRoots {
		first := len(g.rootSlots)
		slot(RootSlot{Frame: -1, Field: FieldAddr, Value: o.Addr})
		r := Root{Kind: RootOther, Goroutine: -1, Frame: -1, Index: i, Addr: o.Addr}
		g.nameRoot(&r, o.Desc)
		finish(r, first)
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
	g.stackRecords = stackObjs.examined
	return nil
}

// deferClosures are the defer records, sorted by goroutine and SP, so
// that a frame finds its own in logarithmic time however many defers its
// goroutine has.
type deferClosures []deferClosure

// deferClosure is the defer record at index in Dump.Defers: its address
// and its closure's.
type deferClosure struct {
	g, sp, addr, fn uint64
	index           int
}

func deferIndex(defers []Defer) deferClosures {
	x := make(deferClosures, 0, len(defers))
	for i, d := range defers {
		x = append(x, deferClosure{d.G, d.SP, d.Addr, d.Fn, i})
	}
	// Stable: a frame's closures keep the order of their records.
	slices.SortStableFunc(x, func(a, b deferClosure) int {
		return cmp.Or(cmp.Compare(a.g, b.g), cmp.Compare(a.sp, b.sp))
	})
	return x
}

// of yields the closures deferred by the frame at sp of goroutine g.
func (x deferClosures) of(g, sp uint64) iter.Seq2[int, deferClosure] {
	return func(yield func(int, deferClosure) bool) {
		i, _ := slices.BinarySearchFunc(x, deferClosure{g: g, sp: sp}, func(a, b deferClosure) int {
			return cmp.Or(cmp.Compare(a.g, b.g), cmp.Compare(a.sp, b.sp))
		})
		for k := 0; i < len(x) && x[i].g == g && x[i].sp == sp; i, k = i+1, k+1 {
			if !yield(k, x[i]) {
				return
			}
		}
	}
}

// ofGoroutine yields the closures deferred by goroutine g's frames.
func (x deferClosures) ofGoroutine(g uint64) iter.Seq[deferClosure] {
	return func(yield func(deferClosure) bool) {
		i, _ := slices.BinarySearchFunc(x, g, func(a deferClosure, g uint64) int { return cmp.Compare(a.g, g) })
		for ; i < len(x) && x[i].g == g; i++ {
			if !yield(x[i]) {
				return
			}
		}
	}
}

// isPanicValue reports whether the frame slot at addr holding v is the
// data word of the value of one of the panics at indices idx: the runtime
// keeps a _panic on the stack of gopanic, its value at its start (Go 1.23
// on) or one word in (Go 1.22).
func isPanicValue(panics []Panic, idx []int, addr, v, ptrSize uint64) bool {
	for _, i := range idx {
		pr := &panics[i]
		if v == pr.Data && (addr == pr.Addr+ptrSize || addr == pr.Addr+2*ptrSize) {
			return true
		}
	}
	return false
}

// panicIndex returns the indices in panics of each goroutine's panic
// records with a value, by goroutine address, in record order.
func panicIndex(panics []Panic) map[uint64][]int {
	x := map[uint64][]int{}
	for i, pr := range panics {
		if pr.Data != 0 {
			x[pr.G] = append(x[pr.G], i)
		}
	}
	return x
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

// appendInSteps appends x to s, growing s by a quarter when it is full
// into a new array copied in steps (bigarray.Grow), so that a collection
// need not wait for one long copy: the room made up front for the roots
// and their slots leaves out the stack objects' and the globals', which
// may be many (100,000 goroutines each holding a context: a plain
// append made the run 20 to 35% slower).
func appendInSteps[T any](s []T, x T) []T {
	if len(s) == cap(s) {
		s = bigarray.Grow(s, cap(s)+cap(s)/4+1)
	}
	return append(s, x)
}
