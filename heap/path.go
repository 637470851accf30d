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
// walking the reverse graph (built on first use) back from v.
func (a *Analysis) rootsReaching(v uint32) []uint32 {
	if a.preds == nil {
		a.preds = reverse(a.Start, a.Succ)
	}
	p := a.preds
	seen := make([]uint64, (len(p.Start)+63)/64)
	mark := func(w uint32) bool {
		if seen[w/64]&(1<<(w%64)) != 0 {
			return false
		}
		seen[w/64] |= 1 << (w % 64)
		return true
	}
	mark(v)
	queue := []uint32{v}
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
	return roots
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
