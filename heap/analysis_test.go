package heap

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
)

// Analyze takes the live set from its dominator tree instead of searching
// the graph as Load does: both must agree, node by node and in Stats.
func TestAnalyzeLiveAgreesWithLoad(t *testing.T) {
	d := progDump(t)
	g, err := heapdump.Load(d.path, heapdump.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	a, err := Analyze(d.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	gs, as := g.Stats(), a.stats
	if as.Objects != gs.Objects || as.Bytes != gs.Bytes || as.LiveObjects != gs.LiveObjects || as.LiveBytes != gs.LiveBytes ||
		as.DeadObjects != gs.DeadObjects || as.DeadBytes != gs.DeadBytes {
		t.Errorf("Analyze stats %+v, Load stats %+v", as, gs)
	}
	if a.g.NumNodes() != g.NumNodes() {
		t.Fatalf("Analyze graph has %d nodes, Load's %d", a.g.NumNodes(), g.NumNodes())
	}
	live := 0
	for v := range heapdump.NodeID(g.NumNodes()) {
		if a.reachable(v) != g.Live(v) {
			t.Fatalf("node %d: reachable %v in the dominator tree of Analyze, live %v after Load", v, a.reachable(v), g.Live(v))
		}
		if g.Live(v) {
			live++
		}
	}
	if live == 0 || uint64(live) == gs.Objects {
		t.Errorf("%d live nodes of %d objects: the dump should have both live and dead ones", live, gs.Objects)
	}
}

// Up to exactOtherRoots shared objects, Holders lists the other roots of
// every one, one search back from each; past that it tells whether there
// are any from the reachers and lists them for the groups it reports only.
// Both must give the same report, on a dump where a list, a slice and a map
// share hundreds of nodes.
func TestOtherRootsExactAndFromReachers(t *testing.T) {
	for _, c := range []struct {
		args    []string
		minSize uint64
		top     int
		focus   string
	}{
		{[]string{"-small"}, 1, 0, ""},
		{[]string{"-small"}, 1, 5, `^main\.node$`},
		{[]string{"-small"}, 1 << 10, 0, ""},
	} {
		d := progDump(t, c.args...)
		var focus *regexp.Regexp
		if c.focus != "" {
			focus = regexp.MustCompile(c.focus)
		}
		bin := openShared(t, d.exe)
		report := func(exact int) ([]byte, *Report) {
			defer func(old int) { exactOtherRoots = old }(exactOtherRoots)
			exactOtherRoots = exact
			a, err := Analyze(d.path, bin)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			rep, err := a.Holders(MinSize(c.minSize), Top(c.top), Focus(focus))
			if err != nil {
				t.Fatal(err)
			}
			if exact == 0 && a.reach == nil && c.minSize == 1 {
				// Every node of the list is shared.
				t.Fatalf("%v: no reachers computed: no shared object", c.args)
			}
			if exact > 0 && a.reach != nil {
				t.Fatalf("%v: reachers computed with exactOtherRoots = %d", c.args, exact)
			}
			for i := range a.g.NumRoots() {
				r := heapdump.NodeID(a.g.NumObjects() + i)
				if got, want := a.isRuntimeGlobalRoot(r), isRuntimeGlobal(a.holder(r)); got != want {
					t.Fatalf("root %d (%+v): isRuntimeGlobalRoot %v, isRuntimeGlobal %v", r, a.holder(r), got, want)
				}
			}
			b, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			return b, rep
		}
		exact, rep := report(1 << 30)
		lazy, _ := report(0)
		if !bytes.Equal(exact, lazy) {
			t.Errorf("%v: reports differ; exact:\n%s\nfrom reachers:\n%s", c.args, exact, lazy)
		}
		shared, others := 0, 0
		for _, g := range rep.Groups {
			if g.Shared {
				shared += g.Count
				if g.OtherRootsTotal > 0 {
					others++
				}
			}
		}
		if c.minSize == 1 && (shared < min(c.top, 2*exactOtherRoots) || others == 0) {
			t.Errorf("%v: %d shared objects, %d groups with other roots: the test needs many of the first, some of the second", c.args, shared, others)
		}
		t.Logf("%v: %d groups, %d shared objects, %d groups with other roots listed", c.args, len(rep.Groups), shared, others)
	}
}

// The reachers tell, for every object and root, whether another root that
// is not one of the runtime's globals reaches the object: check them
// against a search back from every object.
func TestReachers(t *testing.T) {
	for _, args := range [][]string{{"-small"}, {"-small", "-gc=false"}} {
		d := progDump(t, args...)
		bin := openShared(t, d.exe)
		a, err := Analyze(d.path, bin)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		x := a.reachersOf()
		checked := map[bool]int{}
		for v := range heapdump.NodeID(a.g.NumObjects()) {
			var users []heapdump.NodeID // roots reaching v, but for the runtime's globals
			for _, r := range a.reachersOfObject(v, heapdump.NoNode) {
				if r.root != heapdump.NoNode && !isRuntimeGlobal(a.holder(r.root)) {
					users = append(users, r.root)
				}
			}
			// Ask with each root that reaches v, and with a root that does not.
			asks := append(slices.Clone(users), a.g.SuperRoot())
			for _, r := range asks {
				want := slices.ContainsFunc(users, func(u heapdump.NodeID) bool { return u != r })
				if got := x.other(v, r); got != want {
					t.Fatalf("%v: object %d, root %d: other %v, want %v (roots reaching: %v)", args, v, r, got, want, users)
				}
				checked[want]++
			}
		}
		if checked[true] == 0 || checked[false] == 0 {
			t.Errorf("%v: checked %d cases with another root, %d without: want both", args, checked[true], checked[false])
		}
	}
}

// Holders types the objects on the paths of one search once, for all the
// paths that share them; Explain, asked about one object, searches for it
// alone. Both must type the first object of every group the same way.
func TestHoldersTypesPathsAsExplain(t *testing.T) {
	d := progDump(t, "-small")
	bin := openShared(t, d.exe)
	a, err := Analyze(d.path, bin)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rep, err := a.Holders(MinSize(1))
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for _, g := range rep.Groups {
		addr, err := strconv.ParseUint(g.Object.Addr, 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := a.Explain([]uint64{addr})
		if err != nil {
			t.Fatal(err)
		}
		e := ex[0]
		if e == nil {
			t.Fatalf("Explain(%s): no holder", g.Object.Addr)
		}
		// What merging adds up differs; the rest must not. The group's
		// goroutines include the first one's.
		for _, id := range e.Goroutines {
			if !slices.Contains(g.Goroutines, id) {
				t.Errorf("group of %s: goroutines %v lack its first object's %d", g.Object.Addr, g.Goroutines, id)
			}
		}
		e.Count, e.RetainedBytes, e.Objects, e.Goroutines = g.Count, g.RetainedBytes, g.Objects, g.Goroutines
		got, _ := json.Marshal(g)
		want, _ := json.Marshal(e)
		if !bytes.Equal(got, want) {
			t.Fatalf("Holders and Explain differ on %s:\nHolders %s\nExplain %s", g.Object.Addr, got, want)
		}
		if g.Shared {
			shared++
		}
	}
	if len(rep.Groups) < 50 || shared == 0 {
		t.Errorf("%d groups, %d shared: want many, some shared", len(rep.Groups), shared)
	}
}
