package heap

import (
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
)

// The memory an Analysis keeps per node and per edge is counted in
// heapdump's budget (analysisNodeBytes, analysisEdgeBytes): after a full
// report with shared groups (both reverse graphs and searches built)
// and the tree's child lists, the arrays it holds fit those figures.
func TestAnalysisArraysFitTheBudget(t *testing.T) {
	d := progDump(t, "-small")
	a := d.analyze(t)
	if lo := a.opts.loadOptions(d.path, a.Binary); lo.NodeBytes != analysisNodeBytes || lo.EdgeBytes != analysisEdgeBytes {
		t.Fatalf("the reader is told %d bytes a node and %d an edge, want %d and %d", lo.NodeBytes, lo.EdgeBytes, analysisNodeBytes, analysisEdgeBytes)
	}
	rep, err := a.Holders(MinSize(1), Top(0))
	if err != nil {
		t.Fatal(err)
	}
	a.PrepareTree()
	a.reachers(heapdump.NodeID(0), heapdump.NoNode, false) // both reverse graphs, whatever the report needed
	a.reachers(heapdump.NodeID(0), heapdump.NoNode, true)
	if a.preds == nil || a.topPreds == nil || a.tops == nil || a.kids == nil || a.shareIdx == nil {
		t.Fatalf("%d groups: the report should have built the reverse graphs, the holdings' tops, the shared holdings and the child lists", len(rep.Groups))
	}

	words := func(n, size int) int64 { return int64(n) * int64(size) }
	held := map[string]int64{
		"retained":      words(cap(a.retained), 8),
		"objects":       words(cap(a.objects), 4),
		"idom":          words(a.tree.Len(), 4),
		"preorder":      words(len(a.tree.Preorder()), 4),
		"tops":          words(cap(a.tops), 4),
		"parent":        words(cap(a.parent), 4),
		"queue":         words(cap(a.scratch), 4),
		"reverse":       words(cap(a.preds.start), 4) + words(cap(a.preds.succ), 4),
		"tops' reverse": words(cap(a.topPreds.start), 4) + words(cap(a.topPreds.succ), 4),
		"bitmaps":       words(cap(a.seen)+cap(a.gNodes)+cap(a.kidsSorted), 8),
		"child list":    words(cap(a.kids.Start), 4) + words(cap(a.kids.Succ), 4),
		"shared":        words(cap(a.shareIdx.open), 8) + words(cap(a.shareIdx.set), 4) + int64(a.shareIdx.kids.Bytes()),
	}
	var total int64
	for _, n := range held {
		total += n
	}
	nodes, edges := int64(a.g.NumNodes()), int64(a.g.Stats().Edges)
	for v := range heapdump.NodeID(a.g.NumNodes()) {
		if !a.g.IsObject(v) {
			edges += int64(len(a.g.Succ(v))) // root edges, not in Stats
		}
	}
	if budget := nodes*analysisNodeBytes + edges*analysisEdgeBytes; total > budget {
		t.Errorf("%d nodes, %d edges: the analysis holds %d bytes %v, more than the %d its budget counts", nodes, edges, total, held, budget)
	}
	t.Logf("%d nodes, %d edges: %d bytes held %v", nodes, edges, total, held)
	// A root node's share of heapdump's nodeCost (64 bytes) covers the
	// graph's own 5 bytes and the analysis's.
	if analysisNodeBytes+5 > 64 {
		t.Errorf("analysisNodeBytes %d: with the graph's 5 bytes, more than the 64 heapdump counts for a root node", analysisNodeBytes)
	}
}
