package heap

import (
	"slices"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
)

// The backward walk on the reverse edges into the tops of holdings finds
// the same reachers as on every edge, from every top of a dump where a
// list, a slice and a map share hundreds of nodes, or says it cannot.
func TestReachersOnTopsAgree(t *testing.T) {
	d := progDump(t, "-small")
	a := d.analyze(t)
	key := func(rs []reacher) []heapdump.NodeID {
		var k []heapdump.NodeID
		for _, r := range rs {
			k = append(k, r.root, r.g)
		}
		slices.Sort(k)
		return k
	}
	tops, shared, fallback := 0, 0, 0
	for v := range heapdump.NodeID(a.g.NumObjects()) {
		if !a.reachable(v) || a.topOf(v) != v {
			continue
		}
		tops++
		all, _ := a.reachers(v, heapdump.NoNode, false)
		some, ok := a.reachers(v, heapdump.NoNode, true)
		if !ok {
			fallback++
			continue
		}
		if len(all) > 1 {
			shared++
		}
		if !slices.Equal(key(some), key(all)) {
			t.Fatalf("object %d: %v on the tops' edges, %v on all", v, some, all)
		}
	}
	t.Logf("%d tops, %d with several reachers, %d walked again on every edge", tops, shared, fallback)
	if tops == 0 || shared == 0 || fallback == tops {
		t.Fatalf("%d tops, %d with several reachers: the dump should have both", tops, shared)
	}
	if len(a.topPreds.succ) >= len(a.preds.succ) {
		t.Errorf("%d reverse edges into tops, %d in all: want fewer", len(a.topPreds.succ), len(a.preds.succ))
	}
}
