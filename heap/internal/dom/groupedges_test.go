package dom

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Sorting non-tree edges on several cores gives what one core gives: the
// same sources in the same order, the same marks, the same targets.
func TestGroupInParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ r, sources, maxEdges int }{
		{2, 1, 3}, {50, 10, 20}, {1000, 300, 40}, {70000, 5000, 30}, {300, 20000, 4},
	} {
		// Sources with their edges' target nodes; pre numbers the nodes.
		pre := rng.Perm(tc.r)
		var words []uint32
		for range tc.sources {
			words = append(words, uint32(rng.IntN(tc.r))|mark)
			for range 1 + rng.IntN(tc.maxEdges) {
				words = append(words, uint32(rng.IntN(tc.r)))
			}
		}
		pre32 := make([]uint32, tc.r)
		for i, v := range pre {
			pre32[i] = uint32(v)
		}
		load := func() *edges {
			var l edges
			for _, w := range words {
				l.add(w)
			}
			return &l
		}
		sorted := func(l *edges) []uint32 {
			var out []uint32
			for i := range l.n {
				out = append(out, l.at(i))
			}
			return out
		}
		one := load()
		m := 0
		for _, w := range words {
			if w&mark == 0 {
				m++
			}
		}
		ab := make([]uint64, max(m, tc.r))
		defer func(n int) { parallelMinEdges = n }(parallelMinEdges)
		parallelMinEdges = math.MaxInt
		wantHas := one.groupByTarget(tc.r, slices.Clone(pre32), ab, make([]uint64, m))
		want := sorted(one)
		for _, k := range []int{2, 3, 8} {
			got := load()
			ab := make([]uint64, max(m, tc.r))
			has := got.groupInParallel(k, m, tc.r, slices.Clone(pre32), ab, make([]uint64, m))
			if !slices.Equal(sorted(got), want) || !slices.Equal(has, wantHas) {
				t.Errorf("%d nodes, %d sources, %d workers: the edges differ from one worker's", tc.r, tc.sources, k)
			}
		}
	}
}
