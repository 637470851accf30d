package heap

import (
	"math/bits"
	"runtime"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/internal/allochelper"

	"github.com/ctxleak/ctxleak/heapdump"
)

// shortestPaths returns, for each target, a shortest path of nodes from
// from to it (from first, the target last), found by one breadth-first
// search that stops once every target is reached. A path is nil for a
// target the search does not reach.
//
// When from is a root node that dominates a target, every path to the
// target runs through it, so the search from it finds the reference chain
// that matters; from the super-root it finds the nearest of the roots that
// share the target.
func (a *Analysis) shortestPaths(from heapdump.NodeID, targets []heapdump.NodeID) [][]heapdump.NodeID {
	// parent[v] is v's predecessor plus one on the search tree, 0 while v
	// is unseen; the queue lists what to clear for the next search.
	parent := a.searchParents()
	want := make(map[heapdump.NodeID]bool, len(targets))
	for _, t := range targets {
		want[t] = true
	}
	parent[from] = from + 1
	queue := append(a.queue(), from)
	left := len(want)
	if want[from] {
		left--
	}
	for head := 0; head < len(queue) && left > 0; head++ {
		u := queue[head]
		for _, w := range a.g.Succ(u) {
			if parent[w] != 0 {
				continue
			}
			parent[w] = u + 1
			queue = append(queue, w)
			if want[w] {
				left--
			}
		}
	}
	paths := make([][]heapdump.NodeID, len(targets))
	for i, t := range targets {
		if parent[t] == 0 {
			continue
		}
		var p []heapdump.NodeID
		for v := t; ; v = parent[v] - 1 {
			p = append(p, v)
			if v == from {
				break
			}
		}
		slices.Reverse(p)
		paths[i] = p
	}
	for _, v := range queue {
		parent[v] = 0
	}
	return paths
}

// reacher is what keeps an object alive, found by walking the graph
// backwards from it: a root node, or a goroutine whose runtime.g holds it
// through the goroutine's pprof labels (g is its object node).
type reacher struct {
	root   heapdump.NodeID // the root node, or NoNode for a goroutine's labels
	g      heapdump.NodeID // the runtime.g object of a labels reacher
	gIndex int             // its index in Goroutines
	timer  heapdump.NodeID // a timer that reaches the object (root and g NoNode), else NoNode
}

// reachersOfObject returns what keeps object v alive: the root nodes from
// which it is reachable on paths that do not pass through node avoid (NoNode
// for none), walking the reverse graph (built on first use) back from v,
// depth first: on a long chain of objects its stack stays short. A
// goroutine's runtime.g ends the walk: when its pprof labels lead to v, the
// goroutine is what holds v, not the frames and globals that reach every g;
// when another of its fields does (its M, the M's P and the P's timers), it
// is the runtime's own structure. The cost is that of the walk: the objects
// that reach v and their edges.
//
// A shared object's reachers are read from the holder sets of the shared
// holdings (reachersOfShared). Otherwise, without avoid, the walk goes on
// only from the tops of holdings (see holdingTops), so it reads the reverse
// edges into those alone (topPreds: fewer than all, half on a list held by
// two roots); should it come to another object, it walks again with every
// edge.
func (a *Analysis) reachersOfObject(v, avoid heapdump.NodeID) []reacher {
	if avoid == heapdump.NoNode && a.shares().isShared(v) {
		return a.reachersOfShared(v)
	}
	return a.reachersByReverse(v, avoid)
}

// eachReacher calls yield with what reachersOfObject returns, one at a
// time, until yield returns false; it may call it more than once with the
// same reacher. A caller that wants one that passes a test stops the walk
// there: on a chain of 20,000 shared holdings, that is at the first step.
func (a *Analysis) eachReacher(v, avoid heapdump.NodeID, yield func(reacher) bool) {
	if avoid == heapdump.NoNode && a.shares().isShared(v) {
		a.sharedReachers(v, yield)
		return
	}
	if avoid == heapdump.NoNode && a.topOf(v) == v {
		if ok, stopped := a.walkReachers(v, avoid, true, yield); ok || stopped {
			return
		}
	}
	a.walkReachers(v, avoid, false, yield)
}

// reachersByReverse is reachersOfObject by a walk of the reverse graph:
// without avoid, from a top of a holding, on the edges into the tops
// alone; else, or should that walk leave the tops, on every edge.
func (a *Analysis) reachersByReverse(v, avoid heapdump.NodeID) []reacher {
	if avoid == heapdump.NoNode && a.topOf(v) == v {
		if out, ok := a.reachers(v, avoid, true); ok {
			return out
		}
	}
	out, _ := a.reachers(v, avoid, false)
	return out
}

// reachers is reachersByReverse on the reverse edges into the tops of
// holdings (tops) or on all of them. On the first, it reports false, having
// found nothing, when the walk comes to an object that is not a top.
func (a *Analysis) reachers(v, avoid heapdump.NodeID, tops bool) ([]reacher, bool) {
	var out []reacher
	ok, _ := a.walkReachers(v, avoid, tops, func(r reacher) bool {
		out = append(out, r)
		return true
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// walkReachers is reachers, calling yield with each reacher it finds
// until yield returns false (then stopped is true). On the edges into the
// tops of holdings, ok is false when the walk came to an object that is not
// a top: what it yielded is true, but not all.
func (a *Analysis) walkReachers(v, avoid heapdump.NodeID, tops bool, yield func(reacher) bool) (ok, stopped bool) {
	if a.seen == nil {
		a.seen = make([]uint64, (a.g.NumNodes()+63)/64)
	}
	var p *reverseGraph
	switch {
	case tops && a.topPreds == nil:
		a.topPreds = reverse(a.g, func(w heapdump.NodeID) bool { return a.g.IsObject(w) && a.topOf(w) == w })
		fallthrough
	case tops:
		p = a.topPreds
	default:
		if a.preds == nil {
			a.preds = reverse(a.g, nil)
		}
		p = a.preds
	}
	seen := a.seen
	// What is marked is cleared for the next call at the end: the nodes
	// listed in marked, or, once they would outnumber the bitmap's words,
	// the whole bitmap. The stack of what is left to visit is the one
	// scratch array of queue, not a slice grown by doubling.
	var marked []heapdump.NodeID
	clearAll := false
	mark := func(w heapdump.NodeID) bool {
		if seen[w/64]&(1<<(w%64)) != 0 {
			return false
		}
		seen[w/64] |= 1 << (w % 64)
		if clearAll {
			return true
		}
		if len(marked) >= len(seen) {
			clearAll, marked = true, nil
			return true
		}
		marked = append(marked, w)
		return true
	}
	stack := append(a.queue(), v)
	mark(v)
	if avoid != heapdump.NoNode {
		mark(avoid)
	}
	ok = true
	found := func(r reacher) {
		if !stopped && !yield(r) {
			stopped = true
		}
	}
walk:
	for len(stack) > 0 && !stopped {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range p.succ[p.start[u]:p.start[u+1]] {
			if w == a.g.SuperRoot() || !mark(w) {
				continue
			}
			switch gi, isG := a.gObject(w); {
			case !a.g.IsObject(w):
				found(reacher{root: w, g: heapdump.NoNode, timer: heapdump.NoNode})
			case isG:
				if a.labelsPoint(w, u) {
					found(reacher{root: heapdump.NoNode, g: w, gIndex: gi, timer: heapdump.NoNode})
				}
			case a.g.IsTimer(w):
				// A timer holds what it reaches: the runtime's globals
				// that reach every timer are not its holders.
				found(reacher{root: heapdump.NoNode, g: heapdump.NoNode, timer: w})
			case avoid != heapdump.NoNode:
				stack = append(stack, w)
			default:
				// Every path to w passes through the top of its holding,
				// and through the root that holds it, if one does: go
				// there at once.
				t := a.topOf(w)
				if t == heapdump.NoNode {
					break // garbage: no root reaches it
				}
				if t == w {
					stack = append(stack, w)
					break
				}
				if d := a.Idom(t); !a.g.IsObject(d) && d != a.g.SuperRoot() {
					t = d
				}
				if mark(t) {
					if a.g.IsObject(t) {
						if tops && a.topOf(t) != t {
							ok = false
							break walk
						}
						stack = append(stack, t)
					} else {
						found(reacher{root: t, g: heapdump.NoNode, timer: heapdump.NoNode})
					}
				}
			}
		}
	}
	// Clear what was marked, for the next call.
	if clearAll {
		clear(seen)
	}
	for _, w := range marked {
		seen[w/64] &^= 1 << (w % 64)
	}
	return ok, stopped
}

// searchParents returns the searches' parent array, of one zero word a
// node, made on first use. With ReturnMemory, on a graph of releaseWorkNodes
// or more, a collection runs first: the work memory the analysis let go
// since the last one (the shared holdings' predecessors) is then reused by
// this array and the queue, rather than the process growing by as much
// (10M nodes, --min-size 150B --top 3: peak RSS 531 to 550 MiB before, 493
// to 496 MiB after).
func (a *Analysis) searchParents() []heapdump.NodeID {
	if a.parent == nil {
		if a.opts.returnMemory && a.g.NumNodes() >= releaseWorkNodes {
			runtime.GC()
		}
		a.parent = make([]heapdump.NodeID, a.g.NumNodes())
		a.queue() // its array too, after the same collection
	}
	return a.parent
}

// queue returns the scratch array of the searches' queue or stack, empty,
// with room for every node: a search adds each node at most once, so
// appending to it never reallocates, and only the pages it reaches are
// touched.
func (a *Analysis) queue() []heapdump.NodeID {
	if a.scratch == nil {
		a.scratch = make([]heapdump.NodeID, 0, a.g.NumNodes())
	}
	return a.scratch[:0]
}

// gObject reports whether object v is the runtime.g of a goroutine, and
// which.
func (a *Analysis) gObject(v heapdump.NodeID) (int, bool) {
	if !a.g.IsObject(v) {
		return 0, false
	}
	if a.gNodes == nil {
		a.indexGObjects()
	}
	w, bit := v/64, uint64(1)<<(v%64)
	if a.gNodes[w]&bit == 0 {
		return 0, false
	}
	return int(a.gByRank[a.gRank[w]+uint32(bits.OnesCount64(a.gNodes[w]&(bit-1)))]), true
}

// indexGObjects marks the runtime.g objects (gNodes) and numbers them in
// node order (gRank, the objects marked in earlier words), for gObject to
// find each one's goroutine (gByRank) without hashing.
func (a *Analysis) indexGObjects() {
	nodes := make([]heapdump.NodeID, len(a.d.Goroutines))
	a.gNodes = make([]uint64, (a.g.NumObjects()+63)/64)
	for i, g := range a.d.Goroutines {
		nodes[i] = heapdump.NoNode
		// The object must start at the goroutine's address.
		if u, ok := a.g.FindStart(g.Addr); ok {
			a.gNodes[u/64] |= 1 << (u % 64)
			nodes[i] = u
		}
	}
	a.gRank = make([]uint32, len(a.gNodes))
	n := uint32(0)
	for w, word := range a.gNodes {
		a.gRank[w] = n
		n += uint32(bits.OnesCount64(word))
	}
	a.gByRank = make([]int32, n)
	for i, u := range nodes {
		if u != heapdump.NoNode { // the last goroutine of an address wins
			w, bit := u/64, uint64(1)<<(u%64)
			a.gByRank[a.gRank[w]+uint32(bits.OnesCount64(a.gNodes[w]&(bit-1)))] = int32(i)
		}
	}
}

// labelsPoint reports whether the pprof labels of the runtime.g object g
// point into object u. It needs the executable for runtime.g's layout.
func (a *Analysis) labelsPoint(g, u heapdump.NodeID) bool {
	a.labelsOnce.Do(a.readLabels)
	w, ok := a.labels[g]
	return ok && w == u
}

// readLabels reads what the labels of every goroutine's runtime.g point
// into, in one pass over their records: labelsPoint is asked about every
// goroutine blocked on a shared channel, and 100,000 reads of a record
// apiece took 0.6 s. A record that cannot be read counts as no labels.
func (a *Analysis) readLabels() {
	a.labels = map[heapdump.NodeID]heapdump.NodeID{}
	if a.Binary == nil {
		return
	}
	t := a.Binary.TypeByName("runtime.g")
	if t == nil {
		return
	}
	off := int64(-1)
	for _, f := range t.Fields {
		if f.Name == "labels" {
			off = f.Offset
		}
	}
	if off < 0 {
		return
	}
	// The runtime.g objects gObject knows, in node order.
	if a.gNodes == nil {
		a.indexGObjects()
	}
	gs := make([]heapdump.NodeID, 0, len(a.gByRank))
	for w, word := range a.gNodes {
		for ; word != 0; word &= word - 1 {
			gs = append(gs, heapdump.NodeID(w*64+bits.TrailingZeros64(word)))
		}
	}
	for len(gs) > 0 {
		done := 0
		_ = a.g.ObjectWords(gs, off, func(v heapdump.NodeID, word uint64) error {
			done++
			if w, ok := a.g.Find(word); ok {
				a.labels[v] = w
			}
			return nil
		})
		gs = gs[min(done+1, len(gs)):] // past a record that could not be read
	}
}

// reverseGraph is a graph with every edge reversed, in compressed sparse
// row form: the predecessors of node v are succ[start[v]:start[v+1]].
type reverseGraph struct {
	start []uint32
	succ  []heapdump.NodeID
}

// reverse builds the reverse of g, with only the edges into the nodes that
// into accepts (all, for nil).
func reverse(g *heapdump.Graph, into func(heapdump.NodeID) bool) *reverseGraph {
	n := g.NumNodes()
	var keep []uint64 // bitmap of the nodes into accepts
	if into != nil {
		keep = make([]uint64, (n+63)/64)
		for w := range heapdump.NodeID(n) {
			if into(w) {
				keep[w/64] |= 1 << (w % 64)
			}
		}
	}
	kept := func(w heapdump.NodeID) bool { return keep == nil || keep[w/64]&(1<<(w%64)) != 0 }
	rstart := make([]uint32, n+2)
	edges := 0
	for u := range heapdump.NodeID(n) {
		for _, w := range g.Succ(u) {
			if kept(w) {
				rstart[w+2]++
				edges++
			}
		}
	}
	for i := 2; i < len(rstart); i++ {
		rstart[i] += rstart[i-1]
	}
	rsucc := make([]heapdump.NodeID, edges)
	for u := range heapdump.NodeID(n) {
		for _, w := range g.Succ(u) {
			if kept(w) {
				rsucc[rstart[w+1]] = u
				rstart[w+1]++
			}
		}
	}
	return &reverseGraph{start: rstart[:n+1], succ: rsucc}
}

// withContextSite returns the step of s, with the allocation site of its
// object when it is a context node (see isContextType) and the dump has a
// sample for it: where the context was made, which is where a fix goes.
func (a *Analysis) withContextSite(s typedStep) Step {
	st := s.Step
	if s.Omitted > 0 || !isContextType(st.Type) || !a.g.IsObject(s.node) {
		return st
	}
	if b, ok := a.g.AllocSite(s.node); ok {
		skip := func(fn string) bool { return isTimerMachinery(fn) || allochelper.Is(fn) }
		if p := firstSite(b.Stack, skip); p != nil && !skip(p.Function) {
			c := *p // not a pointer into the dump's records
			st.AllocSite = &c
		}
	}
	return st
}

// isContextType reports whether type name t is one of the context
// package's nodes: context.valueCtx, cancelCtx, timerCtx, afterFuncCtx,
// withoutCancelCtx, stopCtx and the like.
func isContextType(t string) bool {
	t = strings.TrimPrefix(t, "*")
	return strings.HasPrefix(t, "context.") && strings.HasSuffix(t, "Ctx")
}
