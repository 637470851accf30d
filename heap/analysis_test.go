package heap

import (
	"bytes"
	"encoding/json"
	"runtime"
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

// Holders groups before it cuts to Top and describes only what it keeps:
// a report with Top(n) is the first n groups of the whole report, and its
// shared groups list their other roots, on a dump where a list, a slice
// and a map share hundreds of nodes.
func TestHoldersTopIsAPrefix(t *testing.T) {
	d := progDump(t, "-small")
	a := d.analyze(t)
	for i := range a.g.NumRoots() {
		r := heapdump.NodeID(a.g.NumObjects() + i)
		if got, want := a.isRuntimeGlobalRoot(r), isRuntimeGlobal(a.holder(r)); got != want {
			t.Fatalf("root %d (%+v): isRuntimeGlobalRoot %v, isRuntimeGlobal %v", r, a.holder(r), got, want)
		}
	}
	for _, minSize := range []uint64{1, 1 << 10} {
		all, err := a.Holders(MinSize(minSize))
		if err != nil {
			t.Fatal(err)
		}
		for _, top := range []int{1, 3, 10} {
			rep, err := a.Holders(MinSize(minSize), Top(top))
			if err != nil {
				t.Fatal(err)
			}
			want := all.Groups[:min(top, len(all.Groups))]
			got, _ := json.Marshal(rep.Groups)
			wantJSON, _ := json.Marshal(want)
			if !bytes.Equal(got, wantJSON) {
				t.Errorf("min size %d, top %d: not the first groups of the whole report:\n%s\nwant\n%s", minSize, top, got, wantJSON)
			}
			if rep.GroupsTotal != all.GroupsTotal {
				t.Errorf("min size %d, top %d: %d groups in all, want %d", minSize, top, rep.GroupsTotal, all.GroupsTotal)
			}
		}
		shared, others := 0, 0
		for _, g := range all.Groups {
			if g.Shared {
				shared += g.Count
				if g.OtherRootsTotal > 0 {
					others++
				}
			}
		}
		if minSize == 1 && (shared < 100 || others == 0) {
			t.Errorf("%d shared objects, %d groups with other roots: the test needs many of the first, some of the second", shared, others)
		}
		t.Logf("min size %d: %d groups, %d shared objects, %d groups with other roots listed", minSize, len(all.Groups), shared, others)
	}
}

// Every holding has a top, itself; every object below it the same top;
// a shared holding's first root is a root that reaches it (the search back
// from it finds that root), and an object dominated by a root is reached
// from that root only.
func TestHoldingTops(t *testing.T) {
	for _, args := range [][]string{{"-small"}, {"-small", "-gc=false"}} {
		d := progDump(t, args...)
		a := d.analyze(t)
		shared := 0
		for v := range heapdump.NodeID(a.g.NumObjects()) {
			top := a.topOf(v)
			if !a.reachable(v) {
				if top != heapdump.NoNode {
					t.Fatalf("%v: object %d is garbage, with top %d", args, v, top)
				}
				continue
			}
			if top == heapdump.NoNode || a.topOf(top) != top || !a.isHolder(a.Idom(top)) {
				t.Fatalf("%v: object %d: top %d is not a holding", args, v, top)
			}
			if top != v && !a.tree.Dominates(uint32(top), uint32(v)) {
				t.Fatalf("%v: object %d: top %d does not dominate it", args, v, top)
			}
			if top != v || a.Idom(v) != a.g.SuperRoot() {
				continue
			}
			r := a.firstRoot(v)
			var reaching []heapdump.NodeID
			for _, x := range a.reachersOfObject(v, heapdump.NoNode) {
				reaching = append(reaching, x.root)
			}
			if r == heapdump.NoNode || (!slices.Contains(reaching, r) && !a.isRuntimeGlobalRoot(r)) {
				t.Fatalf("%v: shared object %d: first root %d, not among the roots that reach it, %v", args, v, r, reaching)
			}
			shared++
		}
		if shared == 0 {
			t.Errorf("%v: no shared holding checked", args)
		}
	}
}

// Holders types the objects on the paths of one search once, for all the
// paths that share them; Explain, asked about one object, searches for it
// alone. Both must type the first object of every group the same way.
func TestHoldersTypesPathsAsExplain(t *testing.T) {
	d := progDump(t, "-small")
	a := d.analyze(t)
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
		e.Count, e.NestedCount, e.RetainedBytes, e.Objects, e.Goroutines, e.GoroutineCount = g.Count, g.NestedCount, g.RetainedBytes, g.Objects, g.Goroutines, g.GoroutineCount
		e.EachMinBytes, e.EachMaxBytes, e.Holding, e.MadeOf, e.Inside, e.MadeOfObjects = g.EachMinBytes, g.EachMaxBytes, g.Holding, g.MadeOf, g.Inside, g.MadeOfObjects
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

// ReturnMemory forces a collection to give the dominator computation's
// work memory back, on graphs from releaseWorkNodes nodes whose work
// memory is a large share of the heap (both lowered here to the test
// dump's); without it, Analyze forces none, whatever the
// graph's size: a test or a service analysing its own dump keeps its GC
// pacing.
func TestReturnMemoryForcesOneCollection(t *testing.T) {
	d := progDump(t)
	defer func(n int, share uint64) { releaseWorkNodes, releaseWorkShare = n, share }(releaseWorkNodes, releaseWorkShare)
	releaseWorkNodes, releaseWorkShare = 1, 1<<40
	forced := func(opts ...Option) uint32 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		a, err := Analyze(d.path, nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		a.Close()
		return after.NumForcedGC - before.NumForcedGC
	}
	if n := forced(); n != 0 {
		t.Errorf("Analyze forced %d collections, want none", n)
	}
	if n := forced(ReturnMemory()); n != 1 {
		t.Errorf("Analyze with ReturnMemory forced %d collections, want 1", n)
	}
}
