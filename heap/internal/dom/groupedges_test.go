package dom

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// Sorting non-tree edges with their targets as numbers, or as nodes on one
// core or several, through pairs or in place, gives the sources grouped by
// their target's number, in their order within a group, the first of each
// group marked, and the targets.
func TestGroupByTarget(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ r, sources, maxEdges int }{
		{2, 1, 3}, {50, 10, 20}, {1000, 300, 40}, {70000, 5000, 30}, {300, 20000, 4},
	} {
		// Sources with their edges' target nodes; pre numbers the nodes.
		pre := make([]uint32, tc.r)
		for i, v := range rng.Perm(tc.r) {
			pre[i] = uint32(v)
		}
		var words []uint32
		type edge struct{ target, source uint32 } // target by number
		var in []edge
		for range tc.sources {
			src := uint32(rng.IntN(tc.r))
			words = append(words, src|mark)
			for range 1 + rng.IntN(tc.maxEdges) {
				node := uint32(rng.IntN(tc.r))
				words = append(words, node)
				in = append(in, edge{pre[node], src})
			}
		}
		slices.SortStableFunc(in, func(a, b edge) int { return cmp.Compare(a.target, b.target) })
		var want []uint32
		wantHas := newBitset(tc.r)
		for i, e := range in {
			if i == 0 || in[i-1].target != e.target {
				want = append(want, e.source|mark)
				wantHas.set(e.target)
			} else {
				want = append(want, e.source)
			}
		}
		m := len(in)
		// With the targets as numbers, on one core.
		for _, abLen := range []int{max(m, tc.r), m - 1} {
			var l edges
			for _, w := range words {
				if w&mark == 0 {
					w = pre[w]
				}
				l.add(w)
			}
			has := l.groupByTarget(tc.r, nil, make([]uint64, abLen), nil, true)
			var got []uint32
			for i := range l.n {
				got = append(got, l.at(i))
			}
			if !slices.Equal(got, want) || !slices.Equal(has, wantHas) {
				t.Errorf("%d nodes, %d sources, targets as numbers, ab of %d: the edges are not grouped by target", tc.r, tc.sources, abLen)
			}
		}
		for _, k := range []int{1, 2, 3, 8} {
			for _, abLen := range []int{max(m, tc.r), m - 1} { // pairs, in place
				var l edges
				for _, w := range words {
					l.add(w)
				}
				has := l.group(k, m, tc.r, slices.Clone(pre), make([]uint64, abLen), make([]uint64, m))
				var got []uint32
				for i := range l.n {
					got = append(got, l.at(i))
				}
				if !slices.Equal(got, want) || !slices.Equal(has, wantHas) {
					t.Errorf("%d nodes, %d sources, %d workers, ab of %d: the edges are not grouped by target", tc.r, tc.sources, k, abLen)
				}
			}
		}
	}
}
