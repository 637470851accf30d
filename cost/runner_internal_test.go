package cost

import (
	"slices"
	"testing"
)

// TestChildrenOfARun checks how a run splits into child processes: one
// for all the Op rows, one per Pending row, one for all the Server rows,
// every row once, and both the order of the Op rows and the order of the
// children turning from run to run; Batch puts every row in one child.
func TestChildrenOfARun(t *testing.T) {
	list := Measurements()
	var firstOps, firstChildren []string
	for run := range 3 {
		groups := children(list, run, false)
		seen := map[string]int{}
		var ops, servers, pendings int
		for _, g := range groups {
			m, _ := Lookup(g[0])
			switch m.Kind {
			case Op:
				ops++
			case Server:
				servers++
			case Pending:
				pendings++
				if len(g) != 1 {
					t.Errorf("run %d: pending rows share a child: %v", run, g)
				}
			}
			for _, name := range g {
				seen[name]++
				if n, _ := Lookup(name); n.Kind != m.Kind {
					t.Errorf("run %d: %s (%s) in a child of %s rows: %v", run, name, n.Kind, m.Kind, g)
				}
			}
		}
		if ops != 1 || servers != 1 || pendings != 5 {
			t.Errorf("run %d: %d op, %d server, %d pending children; want 1, 1, 5", run, ops, servers, pendings)
		}
		for _, m := range list {
			if seen[m.Name] != 1 {
				t.Errorf("run %d: %s measured %d times", run, m.Name, seen[m.Name])
			}
		}
		var opsChild []string
		var order []string
		for _, g := range groups {
			order = append(order, g[0])
			if m, _ := Lookup(g[0]); m.Kind == Op {
				opsChild = g
			}
		}
		if run == 0 {
			firstOps, firstChildren = opsChild, order
		} else if slices.Equal(opsChild, firstOps) || slices.Equal(order, firstChildren) {
			t.Errorf("run %d: the same order as run 0: ops %v, children %v", run, opsChild, order)
		}
	}
	if g := children(list, 1, true); len(g) != 1 || len(g[0]) != len(list) {
		t.Errorf("batch: %d children, want 1 with every row", len(g))
	}
}
