package dom_test

import "github.com/ctxleak/ctxleak/heap/internal/dom"

// The reference: dominators by their definition. d dominates v when v is
// reachable from the root and stops being so once d is taken out of the graph.
// It is quadratic and obviously right, for small graphs.

type naive struct {
	idom     []uint32 // None if unreachable, root for root
	dominate [][]bool // dominate[d][v]: d dominates v (reflexive)
	reach    []bool
}

// reachWithout returns the nodes reachable from root in g without passing
// through node cut (none if cut is the root); cut = None cuts nothing.
func reachWithout(g dom.Graph, root, cut uint32) []bool {
	n := g.Len()
	seen := make([]bool, n)
	if root == cut {
		return seen
	}
	seen[root] = true
	queue := []uint32{root}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range g.Succs(v) {
			if w != cut && !seen[w] {
				seen[w] = true
				queue = append(queue, w)
			}
		}
	}
	return seen
}

func naiveDominators(g dom.Graph, root uint32) naive {
	n := g.Len()
	reach := reachWithout(g, root, dom.None)
	dominate := make([][]bool, n)
	ndoms := make([]int, n) // number of dominators of v, v included
	for d := range uint32(n) {
		dominate[d] = make([]bool, n)
		if !reach[d] {
			continue
		}
		without := reachWithout(g, root, d)
		for v := range n {
			if reach[v] && !without[v] {
				dominate[d][v] = true
				ndoms[v]++
			}
		}
	}
	idom := make([]uint32, n)
	for v := range uint32(n) {
		idom[v] = dom.None
		if !reach[v] {
			continue
		}
		if v == root {
			idom[v] = root
			continue
		}
		// The dominators of v form a chain; the immediate one is the
		// strict dominator that has the most dominators itself.
		best := -1
		for d := range uint32(n) {
			if d != v && dominate[d][v] && ndoms[d] > best {
				best, idom[v] = ndoms[d], d
			}
		}
	}
	return naive{idom: idom, dominate: dominate, reach: reach}
}

// retained returns the retained size of every node by definition.
func (nv naive) retained(sizes []uint64) []uint64 {
	n := len(nv.idom)
	ret := make([]uint64, n)
	for d := range n {
		for v := range n {
			if nv.dominate[d][v] {
				ret[d] += sizes[v]
			}
		}
	}
	return ret
}
