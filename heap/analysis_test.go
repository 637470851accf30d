package heap

import "testing"

// Analyze takes the live set from its dominator tree instead of searching
// the graph as Load does: both must agree, node by node and in Stats.
func TestAnalyzeLiveAgreesWithLoad(t *testing.T) {
	d := progDump(t)
	g := d.load(t, Options{})
	a, err := Analyze(d.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Stats != g.Stats {
		t.Errorf("Analyze stats %+v, Load stats %+v", a.Stats, g.Stats)
	}
	if len(a.Start) != len(g.Start) {
		t.Fatalf("Analyze graph has %d nodes, Load's %d", len(a.Start)-1, len(g.Start)-1)
	}
	live := 0
	for v := range uint32(len(g.Start) - 1) {
		if a.Live(v) != g.Live(v) {
			t.Fatalf("node %d: live %v after Analyze, %v after Load", v, a.Live(v), g.Live(v))
		}
		if a.Live(v) != a.tree.Reachable(v) {
			t.Fatalf("node %d: live %v, reachable in the dominator tree %v", v, a.Live(v), a.tree.Reachable(v))
		}
		if g.Live(v) {
			live++
		}
	}
	if live == 0 || uint64(live) == g.Stats.Objects {
		t.Errorf("%d live nodes of %d objects: the dump should have both live and dead ones", live, g.Stats.Objects)
	}
}
