package dom_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
)

// TestRootKids checks KeepRootKids on random graphs: the kids are exactly
// the nodes whose immediate dominator is the root, and each kid's
// predecessors are every edge into it from a reachable node but itself,
// with the search's parent, a predecessor, first.
func TestRootKids(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	iters := 500
	if longTests() {
		iters = 30000
	}
	for i := range iters {
		g, root := randomGraph(rng)
		tr, err := dom.New(g, root, dom.KeepRootKids)
		if err != nil {
			t.Fatalf("graph %d: %v", i, err)
		}
		switch i % 3 {
		case 0, 1:
			// New collects the kids' predecessors reading the memory of
			// what becomes the first RetainedObjects, and ranking them in
			// that of the first Retained: asked first, either must wait
			// for them and leave them whole.
			plain, err := dom.New(g, root)
			if err != nil {
				t.Fatalf("graph %d: %v", i, err)
			}
			if i%3 == 0 {
				if got, want := tr.RetainedObjects(), plain.RetainedObjects(); !slices.Equal(got, want) {
					t.Fatalf("graph %d: RetainedObjects %v with KeepRootKids, %v without", i, got, want)
				}
				break
			}
			sizes := make([]uint32, g.Len())
			for v := range sizes {
				sizes[v] = uint32(v%7 + 1)
			}
			if got, want := dom.Retained(tr, sizes), dom.Retained(plain, sizes); !slices.Equal(got, want) {
				t.Fatalf("graph %d: Retained %v with KeepRootKids, %v without", i, got, want)
			}
		}
		checkRootKids(t, i, g, root, tr)
	}
	tr, err := dom.New(build(2, [][2]uint32{{0, 1}}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.TakeRootKids() != nil {
		t.Error("TakeRootKids without KeepRootKids is not nil")
	}
}

// checkRootKids checks what KeepRootKids kept for tree tr of graph g
// (number i of a test) against every edge of g.
func checkRootKids(t *testing.T, i int, g dom.Graph, root uint32, tr *dom.Tree) {
	t.Helper()
	k := tr.TakeRootKids()
	if k == nil || tr.TakeRootKids() != nil {
		t.Fatalf("graph %d: TakeRootKids gave %v, then not nil", i, k)
	}
	rank := 0
	for v := range uint32(g.Len()) {
		if b := k.Below(v); b != rank {
			t.Fatalf("graph %d: Below(%d) = %d, want the %d kids below it", i, v, b, rank)
		}
		r, ok := k.Rank(v)
		want := v != root && tr.Idom(v) == root
		if ok != want {
			t.Fatalf("graph %d: Rank(%d) says kid %v, idom %d of root %d", i, v, ok, tr.Idom(v), root)
		}
		if !ok {
			continue
		}
		if r != rank {
			t.Fatalf("graph %d: Rank(%d) = %d, want %d", i, v, r, rank)
		}
		if kid := k.Kid(r); kid != v {
			t.Fatalf("graph %d: Kid(%d) = %d, want %d", i, r, kid, v)
		}
		rank++
		var preds []uint32
		for u := range uint32(g.Len()) {
			for _, w := range g.Succs(u) {
				if w == v && u != v && tr.Reachable(u) {
					preds = append(preds, u)
				}
			}
		}
		got := slices.Clone(k.Preds(r))
		if len(got) == 0 || !slices.Contains(preds, got[0]) {
			t.Fatalf("graph %d: kid %d: preds %v, want the parent first of %v", i, v, got, preds)
		}
		slices.Sort(got)
		slices.Sort(preds)
		if !slices.Equal(got, preds) {
			t.Fatalf("graph %d: kid %d: preds %v, want %v", i, v, got, preds)
		}
	}
	all := 0
	for r, v := range k.All() {
		if got, ok := k.Rank(v); !ok || got != r || r != all {
			t.Fatalf("graph %d: All yields %d at rank %d, Rank says %d %v", i, v, r, got, ok)
		}
		all++
	}
	for lo := 0; lo <= k.Len(); lo++ {
		for hi := lo; hi <= k.Len(); hi++ {
			want := lo
			for r, v := range k.Ranks(lo, hi) {
				if got, ok := k.Rank(v); !ok || got != r || r != want {
					t.Fatalf("graph %d: Ranks(%d, %d) yields %d at rank %d, Rank says %d %v, want rank %d", i, lo, hi, v, r, got, ok, want)
				}
				want++
			}
			if want != hi {
				t.Fatalf("graph %d: Ranks(%d, %d) stops at rank %d", i, lo, hi, want)
			}
		}
	}
	if rank != k.Len() || all != rank {
		t.Fatalf("graph %d: Len() = %d, want %d", i, k.Len(), rank)
	}
}

// TestPreorderIdoms checks that PreorderIdoms gives each node's immediate
// dominator as its position in Preorder, and nil once RetainedObjects took
// the memory.
func TestPreorderIdoms(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		g, root := randomGraph(rng)
		var opts []dom.Option
		if i%2 == 0 {
			opts = append(opts, dom.KeepRootKids)
		}
		tr, err := dom.New(g, root, opts...)
		if err != nil {
			t.Fatalf("graph %d: %v", i, err)
		}
		order, idoms := tr.Preorder(), tr.PreorderIdoms()
		if len(idoms) != len(order) || idoms[0] != 0 {
			t.Fatalf("graph %d: %d idoms for %d nodes in preorder, the first %v", i, len(idoms), len(order), idoms[:min(1, len(idoms))])
		}
		for j, v := range order[1:] {
			if d := idoms[j+1]; int(d) > j || order[d] != tr.Idom(v) {
				t.Fatalf("graph %d: node %d at %d: idom at %d, node %d; Idom says %d", i, v, j+1, d, order[d], tr.Idom(v))
			}
		}
		tr.RetainedObjects()
		if tr.PreorderIdoms() != nil {
			t.Fatalf("graph %d: PreorderIdoms after RetainedObjects is not nil", i)
		}
	}
}
