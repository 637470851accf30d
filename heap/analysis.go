package heap

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap/internal/dom"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/recent"
)

// Analysis is a heap dump read with the help of the executable that wrote
// it, with its dominator tree: how many bytes every object retains, and
// which root holds it. Build one with Analyze; ask it for the holder report
// (Holders) or for the holders of particular objects (Explain).
type Analysis struct {
	// Binary is the executable that wrote the dump, or nil.
	Binary *binsym.Binary
	// Unknown says what the report cannot tell for want of inputs (no
	// executable, no DWARF, a PIE...), one typed reason each.
	Unknown []Unknown

	g        *heapdump.Graph
	d        *heapdump.Dump // g.Dump()
	opts     options        // as given to Analyze
	tree     *dom.Tree
	retained []uint64 // bytes retained by each node
	// recordMembers makes Holders list the members each group counts
	// (Report.members), for the tests of its arithmetic.
	recordMembers bool
	objects       []uint32 // objects retained by each node, itself included
	stats         heapdump.Stats

	parent  []heapdump.NodeID // search tree of shortestPaths, plus one, reused
	scratch []heapdump.NodeID // the queue of the searches (queue)
	preds   *reverseGraph     // the reverse graph, built on demand
	// topPreds is the reverse graph's edges into the tops of holdings,
	// built on demand (reachersOfObject).
	topPreds *reverseGraph
	seen     []uint64 // bitmap of reachersOfObject, clear between calls
	gNodes   []uint64 // bitmap of the objects that are goroutines' runtime.g, built on demand
	gRank    []uint32 // per word of gNodes: the objects marked in earlier words
	gByRank  []int32  // the goroutine of each marked object, in node order
	// labels is the object the pprof labels of each goroutine's
	// runtime.g point into, for those that have labels, read once by
	// labelsPoint (which shares calls on two cores).
	labels     map[heapdump.NodeID]heapdump.NodeID
	labelsOnce sync.Once
	types      typer
	// tops is the top object of every node's holding, or a shared one's
	// first root (holdingTops);
	// sigIDs the id plus one of every root's signature, sigIndex the ids
	// by signature (sigID). All are built on demand.
	tops     []heapdump.NodeID
	heldTops []uint64 // bitmap of the tops of holdings of one holder (tops[v] == v), with tops
	sigIDs   []uint32
	sigIndex map[string]uint32
	sigNames []string // by id
	// sigParts are the ids of the signatures of frame, goroutine and
	// panic roots by what rootSig makes them of, so that 300,000 frames
	// of a few functions format a few signatures (sigID).
	sigParts  map[sigParts]uint32
	sigRecent recent.Cache[sigParts, uint32]
	// topsAhead, if not nil, brings the array holdingTops fills, made
	// ahead (prepareTops).
	topsAhead chan []heapdump.NodeID
	// sites and frameLines keep the executable's answers for siteOf and
	// frameLine.
	sites      map[uint64]knownSite
	frameLines map[frameKey]*binsym.Position
	// typedKeys are the typed keys of runtime-held large objects (holdKey),
	// which typedIndex numbers.
	typedKeys  []string
	typedIndex map[string]int
	// rootKids are the nodes the super-root immediately dominates and
	// their predecessors, until shares takes them.
	rootKids *dom.RootKids
	// shareIdx holds the shared tops, their sets of holder signatures
	// and predecessors (shares), built on demand.
	shareIdx *shareIndex
	// runStarts are, for each segment's pointer slots, the offset of the
	// first slot of their run of consecutive slots (slotRun), built on
	// demand.
	runStarts [][]uint64
	// slotIndex maps, for roots with many slots, each target to its
	// first slot (slotOf), built on demand.
	slotIndex map[heapdump.NodeID]map[heapdump.NodeID]int
	// shared is what the super-root immediately dominates, bytes and
	// objects, added up by groupHoldings' scan.
	shared [2]uint64
	// maxSteps is the longest path a group shows (MaxPathSteps).
	maxSteps int
	// leaked are the goroutines of the report being built proven leaked,
	// by id, with their wait reasons (LeakedGoroutines), or nil.
	leaked map[uint64]string
	// scanParts is how many parts of the nodes groupHoldings scans at
	// once, 0 to choose by their number (scanHoldings); tests set it.
	scanParts int
	// kids are the dominator tree's child lists, built once on demand
	// (tree.go); kidsSorted marks the nodes whose list is sorted by
	// retained size; wideRet are the retained sizes of the children of
	// wide nodes, in their unsorted order.
	kidsOnce   sync.Once
	kids       *dom.Graph
	kidsSorted []uint64
	wideRet    map[heapdump.NodeID][]uint64
}

// Analyze reads the heap dump at path and computes its dominator tree.
// bin is the executable that wrote the dump, or nil: with it, frames get
// source lines, outgoing arguments are attributed to the callee frame,
// globals and closures are named and objects are typed; without it the
// report says what is unknown. Analyze checks that bin wrote the dump (same
// Go version, functions at the addresses the dump's frames give) and sets
// its load bias for a PIE.
//
// Options add names the executable lacks (Globals); the options of the
// report (MinSize, Top, Focus) given here are the defaults of Holders.
func Analyze(path string, bin *binsym.Binary, opts ...Option) (*Analysis, error) {
	o := newOptions(opts)
	lo := o.loadOptions(path, bin)
	if o.progress != nil {
		lo = withProgress(lo, o.progress)
	}
	if bin != nil {
		// Decode the executable's DWARF while the dump is read: the reader
		// leaves a core idle while it reads the goroutines' frames, which
		// follow the objects (100,000 goroutines: 0.1 s), and the types
		// are needed only once the graph is built. newAnalysis waits for
		// them (LoadTypes decodes once); so does a failed Load, so that
		// nothing runs on after Analyze returns.
		types := make(chan struct{})
		go func() {
			defer close(types)
			_ = bin.LoadTypes()
		}()
		defer func() { <-types }()
	}
	g, err := heapdump.Load(path, lo)
	if err != nil {
		return nil, err
	}
	a, err := newAnalysis(g, bin, o)
	if err != nil {
		g.Close()
		return nil, err
	}
	return a, nil
}

// newAnalysis computes the dominator tree of g and what follows from it.
func newAnalysis(g *heapdump.Graph, bin *binsym.Binary, o options) (*Analysis, error) {
	a := &Analysis{
		Binary: bin,
		g:      g,
		d:      g.Dump(),
		opts:   o,
	}
	a.prepareConcurrent()
	var labels chan struct{} // closed once the other core's work is done
	var outside int          // its funcsOutside
	var firstOutside string
	if bin != nil {
		// The report types the objects on its paths from the executable's
		// DWARF; decode it on the other core while the dominator tree,
		// which uses one, is computed. Then read there what the
		// goroutines' pprof labels point to, which needs the types and the
		// graph only, and which the shared holdings' sets ask of every
		// goroutine that points into one (100,000 goroutines: 0.05 s); and
		// check the frames' functions for plugins.
		types := make(chan struct{})
		labels = make(chan struct{})
		go func() {
			defer close(labels)
			func() {
				defer close(types)
				_ = bin.LoadTypes() // a type lookup says what failed
			}()
			a.labelsOnce.Do(a.readLabels)
			outside, firstOutside = a.funcsOutside()
		}()
		defer func() { <-types; <-labels }()
	}
	if o.progress != nil {
		o.progress(Progress{Phase: PhaseDominators})
	}
	a.prepareTops()
	tree, err := dom.New(domInput{g}, g.SuperRoot(), dom.KeepRootKids)
	if err != nil {
		return nil, fmt.Errorf("%s: dominators: %w", g.Name(), err)
	}
	a.tree = tree
	// The holdings' tops, then the shared holdings' sets, which every report
	// needs, need only the tree and the super-root's kids, whose
	// predecessors the dominator computation is still collecting on the
	// other core. Once the kids are in, the dominator computation's work
	// memory is garbage, and the shared sets take about as much again: with
	// ReturnMemory, on a big graph it goes back to the system first, rather
	// than stay resident with them (10M nodes: 578 to 538 MB of peak RSS,
	// for one collection of a heap with few pointers); on a small one the
	// forced collection and the page faults after it cost more than the
	// memory it saves (releaseWorkNodes). The sets are made on both cores
	// but as they flow, on one: the retained sizes, which allocate nothing,
	// are added up then on the other. The dominator tree says what is live:
	// the graph need not be searched for it again.
	a.holdingTops()
	a.rootKids = tree.TakeRootKids()
	if o.returnMemory && releaseWorth(g.NumNodes()) {
		debug.FreeOSMemory()
	}
	var total uint64
	a.computeShares(func() {
		a.retained, a.objects = dom.RetainedFillObjects(tree, func(sizes []uint64) {
			g.FillSizes(sizes)
			for _, s := range sizes {
				total += s
			}
		})
	})
	sr := g.SuperRoot()
	a.stats = heapdump.Stats{
		Objects:     uint64(g.NumObjects()),
		Bytes:       total,
		LiveBytes:   a.retained[sr],
		LiveObjects: uint64(a.objects[sr]) - 1 - uint64(g.NumRoots()), // less the super-root and the root nodes, all reachable
	}
	a.stats.DeadObjects = a.stats.Objects - a.stats.LiveObjects
	a.stats.DeadBytes = a.stats.Bytes - a.stats.LiveBytes
	a.types = typer{a: a}
	a.maxSteps = o.maxSteps
	if bin == nil {
		a.Unknown = []Unknown{noBinary}
	} else {
		<-labels // and the plugins' check
		a.Unknown = unknowns(bin.Missing())
		if u, ok := a.pluginUnknown(outside, firstOutside); ok {
			a.Unknown = append(a.Unknown, u)
		}
		if u, ok := a.cleanupUnknown(); ok {
			a.Unknown = append(a.Unknown, u)
		}
	}
	return a, nil
}

// releaseWorkNodes is the number of nodes from which newAnalysis, with
// ReturnMemory, gives the dominator computation's work memory back to the
// system before the shared sets are made: 5 MB of it and more, at 20 bytes a
// node and 12 an edge. Below, a collection and the faults that bring the
// pages back cost more than the memory is worth: without them, the heap
// package's tests, whose dumps are smaller, took 19 to 20 CPU seconds rather
// than 20 to 24. Tests lower it.
var releaseWorkNodes = 1 << 18

// releaseWorkShare is the share of the heap's objects the dominator
// computation's work memory must be, 1/releaseWorkShare at least, for
// newAnalysis to give it back; tests raise it.
var releaseWorkShare = uint64(4)

// domWorkNodeBytes is the dominator computation's work memory per node.
const domWorkNodeBytes = 20

// releaseWorth reports whether giving back the dominator computation's
// work memory of a graph of n nodes is worth a forced collection: from
// releaseWorkNodes nodes, when that memory is a quarter of the heap's
// objects or more. When it is small next to what else the heap keeps, the
// peak is elsewhere: 100,000 goroutines have 13 MB of it in a heap of 160
// MB of frames, roots and arrays, and the collection and the faults after
// it took 0.03 s for no lower peak (0.42 to 0.39 s; 2M and 10M nodes: 39
// and 196 MB of it in 99 and 533 MB, which it lowers).
func releaseWorth(n int) bool {
	if n < releaseWorkNodes {
		return false
	}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return true
	}
	return uint64(n)*domWorkNodeBytes >= s[0].Value.Uint64()/releaseWorkShare
}

// analysisNodeBytes and analysisEdgeBytes bound the memory an Analysis
// keeps per node and per edge of the graph, for heapdump's memory budget
// (heapdump.Options). Per node: the dominator computation's 20 bytes, which
// stay as the tree (idom, preorder), retained bytes and object counts; the
// tops of holdings, the searches' parent array and queue and the reverse
// graph's start index and that of its edges into the tops of holdings, 4
// bytes each; the tree's child lists, 8; the shared holdings' sets and
// the index of their predecessors, 8; the bitmaps, 1. Per edge: the
// dominator computation's non-tree edges, 12 at most (the shared
// holdings' flow edges and queue, built after those are let go, take less);
// the two reverse graphs' and the shared holdings' predecessors, 4 each.
const (
	analysisNodeBytes = 20 + 5*4 + 8 + 8 + 1
	analysisEdgeBytes = 12 + 3*4
)

// loadOptions are the reader's options for a dump at path written by bin.
func (o *options) loadOptions(path string, bin *binsym.Binary) heapdump.Options {
	lo := heapdump.Options{NodeBytes: analysisNodeBytes, EdgeBytes: analysisEdgeBytes, MemoryLimit: o.memoryLimit}
	if bin != nil {
		lo.Prepare = func(d *heapdump.Dump) error { return matchSegments(path, d, bin) }
		lo.Check = func(d *heapdump.Dump) error { return matchFrames(path, d, bin) }
		lo.OutArgs = bin.ArgsSize
		lo.StackObjects = func(entry uint64) []binsym.StackObject {
			objs, _ := bin.StackObjects(entry) // those read before an error still count
			return objs
		}
	}
	if bin != nil || len(o.globals) > 0 {
		lo.GlobalSymbol = func(addr uint64) (string, uint64, bool) {
			if bin != nil {
				if s, ok := bin.Global(addr); ok {
					return s.Name, s.Addr, true
				}
				if s, ok := o.statics.find(bin, addr); ok {
					return s.Global, s.Addr, true // see staticOf
				}
			}
			return o.global(addr)
		}
	}
	return lo
}

// domInput is the graph as the dominator computation reads it.
type domInput struct{ g *heapdump.Graph }

func (d domInput) Len() int                                  { return d.g.NumNodes() }
func (d domInput) Succs(v heapdump.NodeID) []heapdump.NodeID { return d.g.Succ(v) }

// CSR gives the dominator computation the graph's arrays (dom.CSR).
func (d domInput) CSR() ([]uint32, []heapdump.NodeID) { return d.g.CSR() }

// Graph returns the object graph the analysis is of.
func (a *Analysis) Graph() *heapdump.Graph { return a.g }

// Close releases the dump file. The Binary is the caller's to close.
func (a *Analysis) Close() error {
	return a.g.Close()
}

// Retained returns the bytes node v retains: its own size and that of every
// object it dominates. It is 0 for objects no root reaches.
func (a *Analysis) Retained(v heapdump.NodeID) uint64 { return a.retained[v] }

// RetainedObjects returns the number of objects node v retains, itself
// included when it is an object.
func (a *Analysis) RetainedObjects(v heapdump.NodeID) uint64 {
	n := uint64(a.objects[v])
	if !a.g.IsObject(v) && n > 0 {
		n-- // a root node is not an object
	}
	return n
}

// Idom returns the immediate dominator of node v, or heapdump.NoNode for a
// node no root reaches.
func (a *Analysis) Idom(v heapdump.NodeID) heapdump.NodeID {
	return heapdump.NodeID(a.tree.Idom(uint32(v)))
}

// reachable reports whether a root reaches node v.
func (a *Analysis) reachable(v heapdump.NodeID) bool { return a.tree.Reachable(uint32(v)) }

// holdingRoot returns the root node that dominates object v, or the
// super-root when several roots reach it, and the top-most object of its
// dominator chain (the object the root, or the super-root, immediately
// dominates).
func (a *Analysis) holdingRoot(v heapdump.NodeID) (root, top heapdump.NodeID) {
	top = v
	for u := range a.tree.Chain(uint32(v)) {
		if !a.g.IsObject(heapdump.NodeID(u)) {
			return heapdump.NodeID(u), top
		}
		top = heapdump.NodeID(u)
	}
	return a.g.SuperRoot(), top
}

// prepareConcurrent builds the lazy index that goroutines of the analysis
// read at once: gObject's.
func (a *Analysis) prepareConcurrent() {
	if a.g.NumObjects() > 0 {
		a.gObject(0)
	}
}

// funcSite names the function at code pointer pc (a closure's or a
// finalizer's entry) with its source position.
func (a *Analysis) funcSite(pc uint64) *binsym.Position {
	if a.Binary == nil || pc == 0 {
		return nil
	}
	f, ok := a.Binary.Func(pc)
	if !ok || f.Entry != pc {
		return nil
	}
	return &binsym.Position{Function: f.Name, File: f.File, Line: f.Line}
}

// isRuntimeGlobalRoot reports whether root node r is one of the runtime's
// own globals (runtime.allp, runtime.m0...), which reach much of the heap
// for reasons of no interest to a report: isRuntimeGlobal(a.holder(r))
// without describing the holder.
func (a *Analysis) isRuntimeGlobalRoot(r heapdump.NodeID) bool {
	root := a.g.Root(r)
	return root.Kind == heapdump.RootGlobal && strings.HasPrefix(a.g.RootName(root), "runtime.")
}
