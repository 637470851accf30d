package dom_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
)

// build returns the graph of n nodes with the given edges, in that order.
func build(n int, edges [][2]uint32) dom.Graph {
	start := make([]uint32, n+1)
	for _, e := range edges {
		start[e[0]+1]++
	}
	for i := 1; i <= n; i++ {
		start[i] += start[i-1]
	}
	pos := slices.Clone(start[:n])
	succ := make([]uint32, len(edges))
	for _, e := range edges {
		succ[pos[e[0]]] = e[1]
		pos[e[0]]++
	}
	return dom.Graph{Start: start, Succ: succ}
}

// parse reads a graph written as edges "A>B C>D", nodes numbered in the order
// of nodes (a space-separated list) then of first appearance.
func parse(nodes, edges string) (g dom.Graph, ids map[string]uint32, names []string) {
	ids = map[string]uint32{}
	id := func(s string) uint32 {
		if v, ok := ids[s]; ok {
			return v
		}
		ids[s] = uint32(len(names))
		names = append(names, s)
		return ids[s]
	}
	for _, s := range strings.Fields(nodes) {
		id(s)
	}
	var es [][2]uint32
	for _, e := range strings.Fields(edges) {
		from, to, ok := strings.Cut(e, ">")
		if !ok {
			panic("bad edge " + e)
		}
		es = append(es, [2]uint32{id(from), id(to)})
	}
	return build(len(names), es), ids, names
}

var classic = []struct {
	name  string
	nodes string // optional: fixes the numbering of these nodes first
	root  string
	edges string
	idom  string // "A:R ..." for every node but the root; "X:-" unreachable
}{
	{
		name: "Lengauer-Tarjan 1979, figure 1",
		root: "R",
		edges: "R>A R>B R>C A>D B>A B>D B>E C>F C>G D>L E>H F>I G>I G>J " +
			"H>E H>K I>K J>I K>I K>R L>H",
		idom: "A:R B:R C:R D:R E:R F:C G:C H:R I:R J:G K:R L:D",
	},
	{
		name:  "Cooper-Harvey-Kennedy, figure 2 (irreducible)",
		root:  "5",
		edges: "5>4 5>3 4>1 3>2 2>1 1>2",
		idom:  "4:5 3:5 2:5 1:5",
	},
	{
		name:  "Cooper-Harvey-Kennedy, figure 4",
		root:  "6",
		edges: "6>5 6>4 5>1 4>2 4>3 1>2 2>1 2>3 3>2",
		idom:  "5:6 4:6 1:6 2:6 3:6",
	},
	{
		name:  "diamond",
		root:  "R",
		edges: "R>A R>B A>C B>C C>D",
		idom:  "A:R B:R C:R D:C",
	},
	{
		name:  "self loops and duplicate edges",
		root:  "R",
		edges: "R>R R>A A>A A>B A>B B>C C>B C>C R>A",
		idom:  "A:R B:A C:B",
	},
	{
		name:  "unreachable parts pointing in",
		root:  "R",
		edges: "R>A X>A X>Y Y>X Y>B A>B",
		idom:  "A:R B:A X:- Y:-",
	},
	{
		name:  "edges back to the root",
		root:  "R",
		edges: "R>A A>R A>B B>R B>A",
		idom:  "A:R B:A",
	},
	{
		name:  "root numbered last, as the heap reader does",
		nodes: "A B C D R",
		root:  "R",
		edges: "R>C R>D C>A D>A A>B B>A",
		idom:  "A:R B:A C:R D:R",
	},
	{
		name:  "root in the middle, nodes before it unreachable",
		nodes: "X Y R A",
		root:  "R",
		edges: "X>R Y>A R>A A>X",
		idom:  "A:R X:A Y:-",
	},
	{
		name:  "single node",
		root:  "R",
		edges: "",
		idom:  "",
	},
	{
		name:  "relative dominator differs from semidominator",
		root:  "R",
		edges: "R>A A>B B>C C>D D>E R>F F>C B>E",
		idom:  "A:R B:A C:R D:C E:R F:R",
	},
	{
		name:  "cross edge from a later subtree",
		root:  "R",
		edges: "R>A A>B B>C R>D D>C D>B",
		idom:  "A:R B:R C:R D:R",
	},
	{
		name: "linked list whose values a map also holds",
		root: "S",
		edges: "S>N0 N0>V0 N0>N1 N1>V1 N1>N2 N2>V2 N2>N3 N3>V3 " +
			"S>M M>V3 M>V1 M>V0 M>V2",
		idom: "N0:S N1:N0 N2:N1 N3:N2 V0:S V1:S V2:S V3:S M:S",
	},
}

func TestClassic(t *testing.T) {
	for _, tc := range classic {
		t.Run(tc.name, func(t *testing.T) {
			g, ids, names := parse(tc.nodes+" "+tc.root, tc.edges)
			root := ids[tc.root]
			tr, err := dom.New(g, root)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{tc.root: tc.root}
			for _, kv := range strings.Fields(tc.idom) {
				v, d, _ := strings.Cut(kv, ":")
				want[v] = d
			}
			for v, name := range names {
				got := "-"
				if d := tr.Idom(uint32(v)); d != dom.None {
					got = names[d]
				}
				if got != want[name] {
					t.Errorf("idom(%s) = %s, want %s", name, got, want[name])
				}
			}
			check(t, g, root, tr)
		})
	}
}

// check compares everything tr says with the reference.
func check(t *testing.T, g dom.Graph, root uint32, tr *dom.Tree) {
	t.Helper()
	n := g.Len()
	ref := naiveDominators(g, root)
	if tr.Len() != n || tr.Root() != root {
		t.Fatalf("Len, Root = %d, %d; want %d, %d", tr.Len(), tr.Root(), n, root)
	}
	for v := range uint32(n) {
		if got, want := tr.Idom(v), ref.idom[v]; got != want {
			t.Fatalf("idom(%d) = %d, want %d\ngraph %v root %d", v, int32(got), int32(want), g, root)
		}
		if tr.Reachable(v) != ref.reach[v] {
			t.Fatalf("Reachable(%d) = %v", v, tr.Reachable(v))
		}
	}

	// Preorder: the reachable nodes once each, root first, each after its
	// immediate dominator.
	order := tr.Preorder()
	pos := make([]int, n)
	for i := range pos {
		pos[i] = -1
	}
	for i, v := range order {
		if pos[v] >= 0 {
			t.Fatalf("Preorder has %d twice", v)
		}
		pos[v] = i
	}
	if len(order) == 0 || order[0] != root {
		t.Fatalf("Preorder %v does not start at the root %d", order, root)
	}
	for v := range uint32(n) {
		if (pos[v] >= 0) != ref.reach[v] {
			t.Fatalf("Preorder %v: node %d in it is %v, reachable is %v", order, v, pos[v] >= 0, ref.reach[v])
		}
		if ref.reach[v] && v != root && pos[tr.Idom(v)] >= pos[v] {
			t.Fatalf("Preorder %v has %d before its idom %d", order, v, tr.Idom(v))
		}
	}

	// Chain and Dominates.
	for v := range uint32(n) {
		var chain []uint32
		for d := range tr.Chain(v) {
			chain = append(chain, d)
		}
		var want []uint32
		if ref.reach[v] {
			for d := v; ; d = ref.idom[d] {
				want = append(want, d)
				if d == root {
					break
				}
			}
		}
		if !slices.Equal(chain, want) {
			t.Fatalf("Chain(%d) = %v, want %v", v, chain, want)
		}
		for a := range uint32(n) {
			if got := tr.Dominates(a, v); got != ref.dominate[a][v] {
				t.Fatalf("Dominates(%d, %d) = %v", a, v, got)
			}
		}
	}

	// Children: v among the successors of idom(v), in preorder.
	kids := tr.Children()
	if kids.Len() != n || len(kids.Succ) != len(order)-1 {
		t.Fatalf("Children: %d nodes, %d edges; want %d, %d", kids.Len(), len(kids.Succ), n, len(order)-1)
	}
	for p := range uint32(n) {
		cs := kids.Succs(p)
		for i, c := range cs {
			if tr.Idom(c) != p || c == root {
				t.Fatalf("Children(%d) = %v has %d, whose idom is %d", p, cs, c, tr.Idom(c))
			}
			if i > 0 && pos[cs[i-1]] >= pos[c] {
				t.Fatalf("Children(%d) = %v not in preorder", p, cs)
			}
		}
	}

	// Retained sizes, both size types, and object counts.
	rng := rand.New(rand.NewPCG(uint64(n), uint64(root)))
	sizes := make([]uint64, n)
	sizes32 := make([]uint32, n)
	ones := make([]uint64, n)
	for i := range sizes {
		sizes32[i] = rng.Uint32()
		sizes[i] = uint64(sizes32[i])
		ones[i] = 1
	}
	want := ref.retained(sizes)
	if got := dom.Retained(tr, sizes32); !slices.Equal(got, want) {
		t.Fatalf("Retained(uint32 sizes) = %v, want %v", got, want)
	}
	if got := dom.Retained(tr, sizes); !slices.Equal(got, want) {
		t.Fatalf("Retained(uint64 sizes) = %v, want %v", got, want)
	}
	// RetainedFill gets an array it must fill for reachable nodes only:
	// what it leaves in the others must not count.
	fill := func(tr *dom.Tree) func([]uint64) {
		return func(dst []uint64) {
			if len(dst) != n {
				t.Fatalf("fill got %d sizes for %d nodes", len(dst), n)
			}
			for v := range dst {
				if tr.Reachable(uint32(v)) {
					dst[v] = sizes[v]
				} else {
					dst[v] = 1 << 40
				}
			}
		}
	}
	got := dom.RetainedFill(tr, fill(tr))
	if !slices.Equal(got, want) {
		t.Fatalf("RetainedFill = %v, want %v", got, want)
	}
	wantObjects := ref.retained(ones)
	for v, k := range tr.RetainedObjects() {
		if uint64(k) != wantObjects[v] {
			t.Fatalf("RetainedObjects()[%d] = %d, want %d", v, k, wantObjects[v])
		}
	}
	// RetainedFillObjects, on a tree of its own, whose work memory it gets.
	tr2, err := dom.New(g, root)
	if err != nil {
		t.Fatal(err)
	}
	gotSizes, gotObjects := dom.RetainedFillObjects(tr2, fill(tr2))
	if !slices.Equal(gotSizes, want) {
		t.Fatalf("RetainedFillObjects sizes = %v, want %v", gotSizes, want)
	}
	for v, k := range gotObjects {
		if uint64(k) != wantObjects[v] {
			t.Fatalf("RetainedFillObjects objects[%d] = %d, want %d", v, k, wantObjects[v])
		}
	}
}

// randomGraph returns a random graph of one of a few shapes, with self loops,
// duplicate edges and unreachable parts left to chance.
func randomGraph(rng *rand.Rand) (dom.Graph, uint32) {
	n := 1 + rng.IntN(40)
	var edges [][2]uint32
	edge := func(v, w int) { edges = append(edges, [2]uint32{uint32(v), uint32(w)}) }
	switch rng.IntN(4) {
	case 0: // uniform
		for range rng.IntN(3*n + 1) {
			edge(rng.IntN(n), rng.IntN(n))
		}
	case 1: // a random tree from 0 and random extra edges
		for w := 1; w < n; w++ {
			if rng.IntN(8) != 0 {
				edge(rng.IntN(w), w)
			}
		}
		for range rng.IntN(n + 1) {
			edge(rng.IntN(n), rng.IntN(n))
		}
	case 2: // a path with edges back and forward
		for w := 1; w < n; w++ {
			edge(w-1, w)
		}
		for range rng.IntN(n + 1) {
			v, w := rng.IntN(n), rng.IntN(n)
			if rng.IntN(3) != 0 && w > v {
				v, w = w, v
			}
			edge(v, w)
		}
	case 3: // dense
		for v := range n {
			for w := range n {
				if rng.IntN(4) == 0 {
					edge(v, w)
				}
			}
		}
	}
	rng.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	return build(n, edges), uint32(rng.IntN(n))
}

// longTests reports whether the long sweeps run: the environment variable
// CTXLEAK_LONG is set (to anything), the one switch of the project.
func longTests() bool { return os.Getenv("CTXLEAK_LONG") != "" }

// TestRandom checks random graphs against the naive reference: 500 by
// default, 100 with -short, 30000 with CTXLEAK_LONG set.
func TestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	iters := 500
	switch {
	case longTests():
		iters = 30000
	case testing.Short():
		iters = 100
	}
	for i := range iters {
		g, root := randomGraph(rng)
		mode := groupings[i%len(groupings)]
		tr, err := newGrouped(mode, g, root)
		if err != nil {
			t.Fatalf("graph %d, %v: %v", i, mode, err)
		}
		check(t, g, root, tr)
	}
}

// grouping is a way New collects and sorts the edges that are not tree
// edges: with the targets as numbers, as graphs of up to a million nodes
// get, or as nodes sorted on one core or on every core, as larger ones do.
type grouping int

const (
	byNumber grouping = iota
	byNodeOneCore
	byNodeEveryCore
)

var groupings = []grouping{byNumber, byNodeOneCore, byNodeEveryCore}

func (m grouping) String() string {
	return [...]string{"targets as numbers", "targets as nodes on one core", "targets as nodes on every core"}[m]
}

// newGrouped is dom.New with the non-tree edges grouped as m says. The
// tests of the package do not run in parallel: the settings are global.
func newGrouped(m grouping, g dom.Graph, root uint32, opts ...dom.Option) (*dom.Tree, error) {
	numbered, parallel := 1<<30, 1<<30
	switch m {
	case byNodeOneCore:
		numbered = 0
	case byNodeEveryCore:
		numbered, parallel = 0, 1
	}
	defer dom.SetNumberedMaxNodes(dom.SetNumberedMaxNodes(numbered))
	defer dom.SetParallelMinEdges(dom.SetParallelMinEdges(parallel))
	return dom.New(g, root, opts...)
}

// TestNonTreeEdges checks graphs whose edges that are not tree edges are
// a few, about as many as the nodes, and many more: New sorts them in the
// arrays it has at hand, in one buffer of their own, or in place and a
// buffer (groupByTarget), with their targets as numbers, and as nodes on
// one core and on every core.
func TestNonTreeEdges(t *testing.T) {
	for _, n := range []int{9, 100, 400} {
		for _, back := range []int{1, n / 3, 2 * n / 3, n - 2, 3 * n} {
			t.Run(fmt.Sprintf("%d nodes %d edges back", n, back), func(t *testing.T) {
				// A path from 0 through every node, and edges from its
				// far end back to the nodes after 1, each not a tree edge.
				var edges [][2]uint32
				for w := 1; w < n; w++ {
					edges = append(edges, [2]uint32{uint32(w - 1), uint32(w)})
				}
				for i := range back {
					edges = append(edges, [2]uint32{uint32(n - 1 - i%(n/2)), uint32(2 + i%(n-2))})
				}
				g := build(n, edges)
				tr, err := newGrouped(byNumber, g, 0)
				if err != nil {
					t.Fatal(err)
				}
				check(t, g, 0, tr)
				// With the targets as nodes: the same tree.
				for _, mode := range groupings[1:] {
					other, err := newGrouped(mode, g, 0)
					if err != nil {
						t.Fatal(err)
					}
					for v := range uint32(n) {
						if other.Idom(v) != tr.Idom(v) {
							t.Fatalf("%v, idom(%d) = %d, want %d", mode, v, other.Idom(v), tr.Idom(v))
						}
					}
					if !slices.Equal(other.Preorder(), tr.Preorder()) {
						t.Fatalf("%v, another preorder", mode)
					}
				}
			})
		}
	}
}

// TestDeep runs on graphs 200,000 nodes deep (a million with CTXLEAK_LONG
// set), with answers known by construction. The goroutine stacks are capped
// at 1 MiB meanwhile, so that any recursion as deep as the graph overflows.
func TestDeep(t *testing.T) {
	L := uint32(100_000)
	if longTests() {
		L = 500_000
	}
	defer debug.SetMaxStack(debug.SetMaxStack(1 << 20))
	t.Run("list of values also held by a map", func(t *testing.T) {
		// list node i (0..L-1) -> value L+i, list node i+1; map 2L -> all
		// values in a shuffled order; super-root 2L+1 -> list head, map.
		rng := rand.New(rand.NewPCG(3, 4))
		m, s := uint32(2*L), uint32(2*L+1)
		var edges [][2]uint32
		for i := range uint32(L) {
			edges = append(edges, [2]uint32{i, L + i})
			if i+1 < L {
				edges = append(edges, [2]uint32{i, i + 1})
			}
		}
		for _, i := range rng.Perm(int(L)) {
			edges = append(edges, [2]uint32{m, L + uint32(i)})
		}
		edges = append(edges, [2]uint32{s, 0}, [2]uint32{s, m})
		g := build(int(2*L+2), edges)
		tr, err := dom.New(g, s)
		if err != nil {
			t.Fatal(err)
		}
		for v := range uint32(2*L + 2) {
			want := s
			if v > 0 && v < L {
				want = v - 1
			}
			if v == s {
				want = s
			}
			if got := tr.Idom(v); got != want {
				t.Fatalf("idom(%d) = %d, want %d", v, got, want)
			}
		}
		sizes := make([]uint32, 2*L+2)
		for i := range sizes {
			sizes[i] = 1
		}
		ret := dom.Retained(tr, sizes)
		if ret[0] != uint64(L) || ret[s] != uint64(2*L+2) || ret[m] != 1 || ret[L-1] != 1 {
			t.Fatalf("retained head %d, root %d, map %d, tail %d", ret[0], ret[s], ret[m], ret[L-1])
		}
	})
	t.Run("path with back edges and shortcuts", func(t *testing.T) {
		// 0 -> 1 -> ... -> 2L-1, 0 -> every multiple of 1000, and from each
		// node an edge back to a random earlier node of its block of 1000.
		n := 2 * L
		rng := rand.New(rand.NewPCG(5, 6))
		var edges [][2]uint32
		for v := range uint32(n) {
			if v%1000 != 0 {
				edges = append(edges, [2]uint32{v, v - 1 - uint32(rng.IntN(int(v%1000)))})
			} else if v > 0 {
				edges = append(edges, [2]uint32{0, v})
			}
			if v+1 < n {
				edges = append(edges, [2]uint32{v, v + 1})
			}
		}
		tr, err := dom.New(build(int(n), edges), 0)
		if err != nil {
			t.Fatal(err)
		}
		for v := range uint32(n) {
			want := uint32(0)
			if v%1000 != 0 {
				want = v - 1
			}
			if got := tr.Idom(v); got != want {
				t.Fatalf("idom(%d) = %d, want %d", v, got, want)
			}
		}
	})
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name string
		g    dom.Graph
		root uint32
		err  string
	}{
		{"no nodes", dom.Graph{}, 0, "no nodes"},
		{"root past the nodes", dom.Graph{Start: []uint32{0, 0}}, 1, "root 1 is not a node"},
		{"root None", dom.Graph{Start: []uint32{0, 0}}, dom.None, "is not a node"},
		{"Start decreasing", dom.Graph{Start: []uint32{0, 2, 1}, Succ: []uint32{0, 0}}, 0, "Start[1] = 2 is past Start[2] = 1"},
		{"Start past Succ", dom.Graph{Start: []uint32{0, 1, 3}, Succ: []uint32{1, 0}}, 0, "past the 2 edges"},
		{"edge past the nodes", dom.Graph{Start: []uint32{0, 1, 2, 3}, Succ: []uint32{1, 7, 0}}, 0, "Succ[1] from node 1 points to node 7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := dom.New(tc.g, tc.root)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("New = %v, %v; want error containing %q", tr, err, tc.err)
			}
		})
	}
	// Start need not begin at 0: edges before Start[0] are not looked at.
	g := dom.Graph{Start: []uint32{2, 3, 3}, Succ: []uint32{99, 99, 1}}
	tr, err := dom.New(g, 0)
	if err != nil || tr.Idom(1) != 0 {
		t.Fatalf("offset Start: %v, %v", tr, err)
	}
}

// TestRetainedTwice checks that the second Retained, which cannot reuse the
// work memory of New, does not share its result with the first.
func TestRetainedTwice(t *testing.T) {
	g, ids, _ := parse("", "R>A A>B")
	tr, err := dom.New(g, ids["R"])
	if err != nil {
		t.Fatal(err)
	}
	a := dom.Retained(tr, []uint64{1, 2, 4})
	b := dom.Retained(tr, []uint64{8, 16, 32})
	if fmt.Sprint(a, b) != "[7 6 4] [56 48 32]" {
		t.Fatalf("Retained = %v, then %v", a, b)
	}
}

// TestConcurrent calls everything at once on one tree, for the race
// detector: only one of the Retained calls may get the work memory of New.
func TestConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	g, root := randomGraph(rng)
	for g.Len() < 20 {
		g, root = randomGraph(rng)
	}
	tr, err := dom.New(g, root)
	if err != nil {
		t.Fatal(err)
	}
	sizes := make([]uint64, g.Len())
	for i := range sizes {
		sizes[i] = uint64(i + 1)
	}
	want := naiveDominators(g, root).retained(sizes)
	var wg sync.WaitGroup
	results := make([][]uint64, 8)
	for i := range results {
		wg.Go(func() {
			results[i] = dom.Retained(tr, sizes)
			tr.RetainedObjects()
			tr.Children()
		})
	}
	wg.Wait()
	for i, got := range results {
		if !slices.Equal(got, want) {
			t.Errorf("Retained in goroutine %d = %v, want %v", i, got, want)
		}
		for j := range i {
			if &results[j][0] == &got[0] {
				t.Errorf("goroutines %d and %d got the same slice", j, i)
			}
		}
	}
}

// FuzzDominators checks New on small graphs: well-formed ones against the
// naive reference, raw arrays (often malformed) for an error rather than a
// panic. The bits of the first byte choose the form (1), KeepRootKids (2)
// and the grouping of the non-tree edges (4, 8).
func FuzzDominators(f *testing.F) {
	f.Add([]byte{0, 5, 0, 0, 1, 1, 2, 2, 0, 2, 3, 3, 4, 4, 2})
	f.Add([]byte{0, 12, 3, 3, 3, 0, 1, 1, 2, 2, 0, 5, 6, 6, 5, 7, 8, 8, 9, 9, 10, 10, 11, 11, 7})
	f.Add([]byte{1, 3, 0, 0, 1, 2, 3, 1, 2, 0})
	f.Add([]byte{1, 2, 1, 0, 3, 1, 0, 1, 1})
	f.Add([]byte{2, 6, 0, 0, 1, 0, 2, 1, 3, 2, 3, 3, 4, 4, 3, 1, 5, 5, 1})
	f.Add([]byte{6, 6, 0, 0, 1, 0, 2, 1, 3, 2, 3, 3, 4, 4, 3, 1, 5, 5, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		var g dom.Graph
		var root uint32
		if data[0]&1 == 0 {
			// A well-formed graph: node count, root, then edges as byte pairs.
			n := int(data[1])%48 + 1
			root = uint32(data[2]) % uint32(n)
			var edges [][2]uint32
			for i := 3; i+1 < len(data); i += 2 {
				edges = append(edges, [2]uint32{uint32(data[i]) % uint32(n), uint32(data[i+1]) % uint32(n)})
			}
			g = build(n, edges)
		} else {
			// Raw arrays, often malformed: New must say so, not panic.
			n := int(data[1]) % 16
			root = uint32(data[2])
			rest := data[3:]
			if len(rest) < n+1 {
				return
			}
			for _, b := range rest[:n+1] {
				g.Start = append(g.Start, uint32(b))
			}
			for _, b := range rest[n+1:] {
				g.Succ = append(g.Succ, uint32(b))
			}
		}
		var opts []dom.Option
		if data[0]&2 != 0 {
			opts = append(opts, dom.KeepRootKids)
		}
		// The non-tree edges' targets as numbers, or as nodes sorted on
		// every core or on one.
		mode := byNumber
		switch data[0] & 12 {
		case 4:
			mode = byNodeEveryCore
		case 8:
			mode = byNodeOneCore
		}
		tr, err := newGrouped(mode, g, root, opts...)
		if err != nil {
			if data[0]&1 == 0 {
				t.Fatalf("well-formed graph: %v", err)
			}
			return
		}
		check(t, g, root, tr)
		if len(opts) > 0 {
			checkRootKids(t, 0, g, root, tr)
		}
	})
}
