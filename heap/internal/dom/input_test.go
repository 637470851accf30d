package dom_test

import (
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
)

// nodeID is a node type of another package, as heap's graph has.
type nodeID uint32

// adjacency is an Input other than a Graph: a successor list per node.
type adjacency [][]nodeID

func (a adjacency) Len() int                { return len(a) }
func (a adjacency) Succs(v nodeID) []nodeID { return a[v] }

// Any Input gives the same tree as the Graph with its edges; an edge to a
// node past the last is an error, not a panic, when the root reaches it.
func TestInput(t *testing.T) {
	adj := adjacency{{1, 2}, {3}, {3}, {1}, {0}} // node 4 is unreachable
	var g dom.Graph
	g.Start, g.Succ = csrOf[uint32](adj)
	got := sameTrees(t, adj, g, "the Input", "the Graph")
	if got.Idom(3) != 0 || got.Reachable(4) {
		t.Errorf("idom(3) = %d, reachable(4) = %v; want 0, false", got.Idom(3), got.Reachable(4))
	}

	bad := adjacency{{1}, {7}}
	if _, err := dom.New(bad, nodeID(0)); err == nil || !strings.Contains(err.Error(), "points to node 7") {
		t.Errorf("edge to node 7 of 2: error %v", err)
	}
	if _, err := dom.New(bad, nodeID(2)); err == nil {
		t.Error("root 2 of 2 nodes: no error")
	}
	if _, err := dom.New(adjacency{}, nodeID(0)); err == nil {
		t.Error("no nodes: no error")
	}
}

// csrOf returns the successor lists of adj in compressed sparse row form.
func csrOf[N ~uint32](adj adjacency) (start []uint32, succ []N) {
	for _, s := range adj {
		start = append(start, uint32(len(succ)))
		for _, w := range s {
			succ = append(succ, N(w))
		}
	}
	return append(start, uint32(len(succ))), succ
}

// sameTrees computes the trees of two inputs of one graph from node 0, a
// and b, and checks that they give every node the same idom; it returns
// a's.
func sameTrees[N, M ~uint32](t *testing.T, a dom.Input[N], b dom.Input[M], aName, bName string) *dom.Tree {
	t.Helper()
	got, err := dom.New(a, N(0))
	if err != nil {
		t.Fatal(err)
	}
	want, err := dom.New(b, M(0))
	if err != nil {
		t.Fatal(err)
	}
	for v := range uint32(a.Len()) {
		if got.Idom(v) != want.Idom(v) {
			t.Errorf("node %d: idom %d from %s, %d from %s", v, got.Idom(v), aName, want.Idom(v), bName)
		}
	}
	return got
}

// csrInput is a CSR of another node type, whose Succs New does not call.
type csrInput struct {
	start []uint32
	succ  []nodeID
}

func (c csrInput) Len() int                  { return len(c.start) - 1 }
func (c csrInput) Succs(v nodeID) []nodeID   { panic("New calls Succs of a CSR") }
func (c csrInput) CSR() ([]uint32, []nodeID) { return c.start, c.succ }

// A CSR gives the tree its successor lists give; a range out of order or
// past its edges is an error, not a panic, when the root reaches its node.
func TestCSRInput(t *testing.T) {
	adj := adjacency{{1, 2}, {3}, {3, 4}, {1}, {}, {0}} // node 5 is unreachable
	var c csrInput
	c.start, c.succ = csrOf[nodeID](adj)
	sameTrees(t, c, adj, "the CSR", "the successor lists")

	for _, tc := range []struct {
		name  string
		start []uint32
	}{
		{"decreasing", []uint32{0, 2, 1, 3, 4, 4, 5}},
		{"past the edges", []uint32{0, 2, 3, 5, 9, 9, 9}},
	} {
		bad := csrInput{start: tc.start, succ: c.succ}
		if _, err := dom.New(bad, nodeID(0)); err == nil || !strings.Contains(err.Error(), "not within the") {
			t.Errorf("%s: error %v, want one naming the range", tc.name, err)
		}
	}
}
