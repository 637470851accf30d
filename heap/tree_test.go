package heap

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
)

// DomChildren lists exactly the nodes each node immediately dominates,
// largest retained first, page by page; the first pages of a node with
// many children, selected without a full sort, agree with the sorted list.
func TestDomChildren(t *testing.T) {
	defer func(old int) { minWide = old }(minWide)
	minWide = 50 // the copies of retained sizes are used for the wide node
	d := progDump(t, "-small")
	a, err := Analyze(d.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	n := a.g.NumNodes()
	want := make(map[heapdump.NodeID][]heapdump.NodeID)
	for v := range heapdump.NodeID(n) {
		if p := a.Idom(v); p != heapdump.NoNode && v != a.g.SuperRoot() {
			want[p] = append(want[p], v)
		}
	}
	// The first page of the node with the most children, before any sort.
	var most heapdump.NodeID
	for p, kids := range want {
		if len(kids) > len(want[most]) {
			most = p
		}
	}
	if len(want[most]) < 100 {
		t.Fatalf("the node with most children has %d: the dump should have a wide node", len(want[most]))
	}
	a.PrepareTree()
	first, total := a.DomChildren(most, 0, 10)
	if _, ok := a.wideRet[most]; !ok {
		t.Errorf("no copy of the retained sizes of the children of node %d (%d children)", most, len(want[most]))
	}
	if total != len(want[most]) || len(first) != 10 {
		t.Fatalf("first page of node %d: %d children of %d, want 10 of %d", most, len(first), total, len(want[most]))
	}
	for v := range heapdump.NodeID(n) {
		kids := want[v]
		var got []heapdump.NodeID
		for off := 0; ; off += 7 {
			page, total := a.DomChildren(v, off, 7)
			if total != len(kids) {
				t.Fatalf("node %d: %d children, want %d", v, total, len(kids))
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
		}
		for i := 1; i < len(got); i++ {
			if a.Retained(got[i]) > a.Retained(got[i-1]) {
				t.Fatalf("node %d: child %d retains %d, more than the one before (%d)", v, i, a.Retained(got[i]), a.Retained(got[i-1]))
			}
		}
		// The same nodes, and the first page selected before any sort
		// agrees with the sorted list.
		sorted := slices.Sorted(slices.Values(got))
		if !slices.Equal(sorted, kids) {
			t.Fatalf("node %d: children %v, want %v", v, sorted, kids)
		}
		if v == most && !slices.Equal(first, got[:10]) {
			t.Errorf("selected first page %v, sorted %v", first, got[:10])
		}
	}
	if page, total := a.DomChildren(heapdump.NodeID(n), 0, 5); page != nil || total != 0 {
		t.Errorf("a node past the graph: %v, %d", page, total)
	}
	if page, _ := a.DomChildren(most, -1, 5); page != nil {
		t.Errorf("offset -1: %v", page)
	}
}

// Paths says who holds an object: shortest first, each path a chain of
// edges from a root to the object, typed from the executable.
func TestPaths(t *testing.T) {
	d := progDump(t, "-small")
	a := d.analyze(t)
	for _, c := range []struct {
		name, kind, holder, typ string
	}{
		{"held_payload", "frame", "main.waitHeld", "[]uint8"},
		{"global_payload", "global", "main.global", "[]uint8"},
	} {
		v, ok := a.g.Find(d.val(t, c.name))
		if !ok {
			t.Fatalf("%s: no object", c.name)
		}
		paths, _, err := a.Paths(v, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) == 0 {
			t.Fatalf("%s: no path", c.name)
		}
		p := paths[0]
		if p.Root.Kind.String() != c.kind || (p.Root.Function != c.holder && p.Root.Global != c.holder) {
			t.Errorf("%s: held by %+v, want %s %s", c.name, p.Root, c.kind, c.holder)
		}
		last := p.Steps[len(p.Steps)-1]
		if last.Addr != fmt.Sprintf("%#x", a.g.ObjectAddr(v)) || last.Type != c.typ {
			t.Errorf("%s: path ends at %s %q", c.name, last.Addr, last.Type)
		}
		for i := 1; i < len(paths); i++ {
			if len(paths[i].Steps)+paths[i].Elided < len(paths[i-1].Steps)+paths[i-1].Elided {
				t.Errorf("%s: path %d is shorter than path %d", c.name, i, i-1)
			}
		}
		if n := a.Nodes([]heapdump.NodeID{v})[0]; n.Kind != NodeObject || n.RetainedBytes < n.Size || n.Size == 0 {
			t.Errorf("%s: node %+v", c.name, n)
		}
	}
	dead, ok := a.g.Find(d.val(t, "dead_payload"))
	if ok {
		if paths, _, _ := a.Paths(dead, 5); len(paths) != 0 {
			t.Errorf("a dead payload has holders: %+v", paths)
		}
	}
}
