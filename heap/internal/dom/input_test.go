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
	for _, s := range adj {
		g.Start = append(g.Start, uint32(len(g.Succ)))
		for _, w := range s {
			g.Succ = append(g.Succ, uint32(w))
		}
	}
	g.Start = append(g.Start, uint32(len(g.Succ)))
	want, err := dom.New(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dom.New(adj, nodeID(0))
	if err != nil {
		t.Fatal(err)
	}
	for v := range uint32(len(adj)) {
		if got.Idom(v) != want.Idom(v) {
			t.Errorf("node %d: idom %d from the Input, %d from the Graph", v, got.Idom(v), want.Idom(v))
		}
	}
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
