package heap

import (
	"slices"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
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
func (a *Analysis) shortestPaths(from uint32, targets []uint32) [][]uint32 {
	if a.parent == nil {
		a.parent = make([]uint32, len(a.Start)-1)
	}
	// parent[v] is v's predecessor plus one on the search tree, 0 while v
	// is unseen; the queue lists what to clear for the next search.
	parent := a.parent
	want := make(map[uint32]bool, len(targets))
	for _, t := range targets {
		want[t] = true
	}
	parent[from] = from + 1
	queue := []uint32{from}
	left := len(want)
	if want[from] {
		left--
	}
	for head := 0; head < len(queue) && left > 0; head++ {
		u := queue[head]
		for _, w := range a.Succ[a.Start[u]:a.Start[u+1]] {
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
	paths := make([][]uint32, len(targets))
	for i, t := range targets {
		if parent[t] == 0 {
			continue
		}
		var p []uint32
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

// rootsReaching returns the root nodes from which object v is reachable,
// walking the reverse graph (built on first use) back from v. Its cost is
// that of the walk: the objects that reach v and their edges.
func (a *Analysis) rootsReaching(v uint32) []uint32 { return a.rootsReachingAvoiding(v, noNode) }

// rootsReachingAvoiding is rootsReaching on paths that do not pass through
// node avoid (noNode for none).
func (a *Analysis) rootsReachingAvoiding(v, avoid uint32) []uint32 {
	if a.preds == nil {
		a.preds = reverse(a.Start, a.Succ)
		a.seen = make([]uint64, (len(a.Start)-1+63)/64)
	}
	p, seen := a.preds, a.seen
	mark := func(w uint32) bool {
		if seen[w/64]&(1<<(w%64)) != 0 {
			return false
		}
		seen[w/64] |= 1 << (w % 64)
		return true
	}
	mark(v)
	queue := []uint32{v}
	if avoid != noNode && avoid != v && mark(avoid) {
		defer func() { seen[avoid/64] &^= 1 << (avoid % 64) }()
	}
	var roots []uint32
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		for _, w := range p.Succ[p.Start[u]:p.Start[u+1]] {
			if w == a.SuperRoot || !mark(w) {
				continue
			}
			if !a.isObject(w) {
				roots = append(roots, w)
				continue
			}
			queue = append(queue, w)
		}
	}
	// Clear what was marked, for the next call.
	for _, list := range [][]uint32{queue, roots} {
		for _, w := range list {
			seen[w/64] &^= 1 << (w % 64)
		}
	}
	return roots
}

// reachers records, for every node, up to two of the roots that reach it,
// leaving out the runtime's own globals (see isRuntimeGlobal), which reach
// much of the heap: enough to tell whether a root other than a given one
// reaches an object, for every object at once.
type reachers struct {
	first []uint32 // a root node that reaches the node, plus one; 0 for none
	more  []uint64 // bitmap: another root reaches the node too
}

// reachersOf computes the reachers of every node with a search from each
// root that goes on only through nodes where it records something new, the
// first or the second root to reach them. Every node is searched from at
// most twice, so the whole costs two searches of the graph.
//
// That is enough: when a node has its two roots, the searches that recorded
// them went on to its successors, each of which got a root from the first
// and, if that was the same root, the second from the other; so everything
// below a node with two roots has two, and a search need not go there.
func (a *Analysis) reachersOf() *reachers {
	n := len(a.Start) - 1
	x := &reachers{first: make([]uint32, n), more: make([]uint64, (n+63)/64)}
	var queue []uint32
	for i := range a.Roots {
		r := uint32(a.NumObjects + i)
		if a.isRuntimeGlobalRoot(r) {
			continue
		}
		queue = append(queue[:0], r)
		for head := 0; head < len(queue); head++ {
			u := queue[head]
			for _, w := range a.Succ[a.Start[u]:a.Start[u+1]] {
				switch f := x.first[w]; {
				case f == 0:
					x.first[w] = r + 1
				case f == r+1 || x.more[w/64]&(1<<(w%64)) != 0:
					continue
				default:
					x.more[w/64] |= 1 << (w % 64)
				}
				queue = append(queue, w)
			}
		}
	}
	return x
}

// other reports whether a root other than root reaches node v.
func (x *reachers) other(v, root uint32) bool {
	if x.more[v/64]&(1<<(v%64)) != 0 {
		return true
	}
	f := x.first[v]
	return f != 0 && f-1 != root
}

// reverse builds the reverse of a graph in compressed sparse row form.
func reverse(start, succ []uint32) *dom.Graph {
	n := len(start) - 1
	rstart := make([]uint32, n+2)
	for _, w := range succ {
		rstart[w+2]++
	}
	for i := 2; i < len(rstart); i++ {
		rstart[i] += rstart[i-1]
	}
	rsucc := make([]uint32, len(succ))
	for u := 0; u < n; u++ {
		for _, w := range succ[start[u]:start[u+1]] {
			rsucc[rstart[w+1]] = uint32(u)
			rstart[w+1]++
		}
	}
	return &dom.Graph{Start: rstart[:n+1], Succ: rsucc}
}
