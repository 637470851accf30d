package heap

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
)

// The groups tests use the patterns of testdata/piles/groups.go: what
// piles up inside one holding, and objects that sets of roots share.

// 300 buffers in main.red, main.green and main.blue, and 300 in main.red
// and main.green only: two shared groups, one per set of holders.
func TestHoldersSharedBySets(t *testing.T) {
	t.Parallel()
	const n, size = 300, 1 << 10
	a := runPile(t, "shared3", n).analyze(t)
	rep, err := a.Holders(MinSize(100 << 10))
	if err != nil {
		t.Fatal(err)
	}
	text := reportText(t, rep)
	want := map[string]bool{"global main.blue,global main.green,global main.red": true, "global main.green,global main.red": true}
	for _, g := range rep.Groups {
		held := slices.Sorted(slices.Values(g.HeldBy))
		key := strings.Join(held, ",")
		if !want[key] {
			t.Errorf("a group held by %q:\n%s", g.HeldBy, text)
			continue
		}
		delete(want, key)
		if g.Count != n || g.RetainedBytes != n*size || g.Object.Type != "[1024]uint8" || !g.Shared {
			t.Errorf("held by %s: %d x %s retaining %d bytes, shared %v; want %d x [1024]uint8 retaining %d, shared",
				key, g.Count, g.Object.Type, g.RetainedBytes, g.Shared, n, n*size)
		}
		// The holder and the other roots are the set.
		roots := []string{"global " + g.Root.Global}
		for _, h := range g.OtherRoots {
			roots = append(roots, h.Short())
		}
		if slices.Sort(roots); !slices.Equal(roots, held) || g.OtherRootsTotal != len(held)-1 {
			t.Errorf("held by %s: holder %s and %d others %v", key, g.Root.Short(), g.OtherRootsTotal, roots)
		}
		if line := "300 objects held together by " + strings.Join(g.HeldBy[:len(g.HeldBy)-1], ", "); !strings.Contains(text, line) {
			t.Errorf("no %q in\n%s", line, text)
		}
	}
	if len(want) > 0 {
		t.Errorf("no group held by %v:\n%s", want, text)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"held_by":["global main.`) {
		t.Errorf("no held_by in %s", js)
	}
}

// The holders of every shared top, read from its propagated set, are the
// roots an independent walk back through the whole reverse graph finds.
func TestSharedSetsMatchReverseWalk(t *testing.T) {
	t.Parallel()
	for _, pattern := range []string{"shared3", "timeouts"} {
		a := runPile(t, pattern, 300).analyze(t)
		s := a.shares()
		checked := 0
		for v := range heapdump.NodeID(a.g.NumObjects()) {
			if !s.isShared(v) {
				continue
			}
			if set := s.members(s.setOf(v)); s.cut(s.setOf(v)) {
				// A cut set names some of the holders, each a true one.
				all := a.reachersByReverse(v, heapdump.NoNode)
				for _, h := range set[:len(set)-1] {
					if !slices.ContainsFunc(all, func(r reacher) bool {
						return r.root == heapdump.NodeID(h) || r.g == heapdump.NodeID(h) || r.timer == heapdump.NodeID(h)
					}) {
						t.Fatalf("%s: shared object %d: cut set %v names %d, not among %v", pattern, v, set, h, all)
					}
				}
				continue
			}
			roots := func(rs []reacher) []heapdump.NodeID {
				var out []heapdump.NodeID
				for _, r := range rs {
					if r.root != heapdump.NoNode {
						out = append(out, r.root)
					}
				}
				slices.Sort(out)
				return out
			}
			got, want := roots(a.reachersOfShared(v)), roots(a.reachersByReverse(v, heapdump.NoNode))
			if !slices.Equal(got, want) {
				t.Fatalf("%s: shared object %d: roots %v from its set, %v from the reverse graph", pattern, v, got, want)
			}
			checked++
		}
		if checked < 300 {
			t.Errorf("%s: %d shared objects checked, want 300 or more", pattern, checked)
		}
	}
}

// What a holding is made of, through a context's children (a map), a map
// and a slice, with allocation sites; context nodes on paths say where they were
// made.
func TestHoldersMadeOfContainers(t *testing.T) {
	t.Parallel()
	const n = 2000
	for _, tt := range []struct {
		pattern, holder string
		part, site      string // a part of the holding and where it is made
		inside          string // the type the path inside goes through
	}{
		{"afterfunc", "main.longLived", "context.afterFuncCtx", "main.register", "context.afterFuncCtx"},
		{"series", "main.vec", "main.series", "main.observe", "main.series"},
		{"slice", "main.entries", "main.entry", "main.addEntry", "main.entry"},
	} {
		a := runPile(t, tt.pattern, n).analyze(t)
		rep, err := a.Holders(MinSize(100 << 10))
		if err != nil {
			t.Fatal(err)
		}
		text := reportText(t, rep)
		var g *Group
		for _, x := range rep.Groups {
			if x.Root.Global == tt.holder {
				g = x
			}
		}
		if g == nil {
			t.Fatalf("%s: no group held by %s:\n%s", tt.pattern, tt.holder, text)
		}
		var part *Part
		for i := range g.MadeOf {
			if g.MadeOf[i].Type == tt.part {
				part = &g.MadeOf[i]
			}
		}
		if part == nil || part.Count != n || part.AllocSite == nil || part.AllocSite.Function != tt.site || part.Bytes != n*part.Size {
			t.Errorf("%s: made of %+v, want %d x %s made at %s:\n%s", tt.pattern, g.MadeOf, n, tt.part, tt.site, text)
		}
		through := slices.IndexFunc(g.Inside, func(s Step) bool { return s.Type == tt.inside })
		if through < 0 {
			t.Errorf("%s: the path inside %+v does not reach a %s", tt.pattern, g.Inside, tt.inside)
		} else if s := g.Inside[through]; isContextType(s.Type) && (s.AllocSite == nil || s.AllocSite.Function != tt.site) {
			t.Errorf("%s: step %+v: want it made at %s", tt.pattern, s, tt.site)
		}
		if want := "made at " + tt.site + " piles/groups.go:"; !strings.Contains(text, want) {
			t.Errorf("%s: no %q in\n%s", tt.pattern, want, text)
		}
	}
}

// 300 pending WithTimeout contexts under a long-lived one: their timer
// contexts are one group, each made in main.withTimeout, which the path's
// last step and the JSON say.
func TestHoldersPendingTimeouts(t *testing.T) {
	t.Parallel()
	const n = 300
	rep, err := runPile(t, "timeouts", n).analyze(t).Holders(MinSize(100 << 10))
	if err != nil {
		t.Fatal(err)
	}
	text := reportText(t, rep)
	var g *Group
	for _, x := range rep.Groups {
		if x.Object.Type == "context.timerCtx" {
			g = x
		}
	}
	if g == nil {
		t.Fatalf("no group of context.timerCtx:\n%s", text)
	}
	// The runtime's timers are 112 bytes too, and share the holders.
	if g.Count != n && g.Count != 2*n {
		t.Errorf("%d objects, want %d timer contexts (and their timers)", g.Count, n)
	}
	if held := strings.Join(g.HeldBy, ","); !strings.Contains(held, "global main.longLived") {
		t.Errorf("held by %q, want global main.longLived among them", g.HeldBy)
	}
	last := g.Path[len(g.Path)-1]
	if last.Type != "context.timerCtx" || last.AllocSite == nil || last.AllocSite.Function != "main.withTimeout" {
		t.Errorf("last step %+v, want a context.timerCtx made at main.withTimeout", last)
	}
	js, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"type":"context.timerCtx","addr"`) || !strings.Contains(string(js), `"alloc_site":{"function":"main.withTimeout"`) {
		t.Errorf("no context.timerCtx step with its site in %s", js)
	}
}

// Sets flow between shared tops in linear time: goroutines blocked on
// one channel make a chain of shared tops (the sudogs of its wait queue)
// whose sets, past maxSetHolders, are cut, and each set changes at most
// maxSetHolders+1 times however many flow into it.
func TestSharedSetsFlowInLinearTime(t *testing.T) {
	t.Parallel()
	a := runPile(t, "stackobj", 5000).analyze(t)
	s := a.shares()
	if s.flows < 5000 {
		t.Fatalf("%d flow edges between shared tops, want the wait queue's 5000 or more", s.flows)
	}
	if limit := (maxSetHolders + 2) * s.flows; s.unions > limit {
		t.Errorf("%d unions for %d flow edges, more than %d", s.unions, s.flows, limit)
	}
	t.Logf("%d shared tops, %d flow edges, %d unions", len(s.set), s.flows, s.unions)
}

// intern gives one id per set, whatever the sets' hashes: with a hash
// that makes most sets collide, each set still gets its own id, and the
// same id when interned again.
func TestInternSetsCollide(t *testing.T) {
	s := &shareIndex{setIndex: map[uint64]uint32{}, setEnd: []uint32{0, 0},
		hash: func(ids []uint32) uint64 { return uint64(ids[0] % 3) }}
	set := func(i uint32) []uint32 { return []uint32{i, i + 1, i + 7} }
	ids := map[uint32]uint32{}
	seen := map[uint32]bool{}
	for i := range uint32(2000) {
		id := s.intern(set(i), maxSetHolders)
		if seen[id] {
			t.Fatalf("set %v: id %d, another set's", set(i), id)
		}
		seen[id] = true
		ids[i] = id
	}
	for i := range uint32(2000) {
		if got := s.intern(set(i), maxSetHolders); got != ids[i] {
			t.Fatalf("set %v interned again: id %d, first %d", set(i), got, ids[i])
		}
		if got := s.members(ids[i]); !slices.Equal(got, set(i)) {
			t.Fatalf("set %d: members %v, want %v", ids[i], got, set(i))
		}
	}
	if s.intern(nil, maxSetHolders) != 0 || len(s.members(0)) != 0 {
		t.Fatal("the empty set is not set 0")
	}
	cut := s.intern([]uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, maxSetHolders)
	if m := s.members(cut); len(m) != maxSetHolders+1 || m[maxSetHolders] != moreIDs || !s.cut(cut) {
		t.Fatalf("cut set: %v", m)
	}
}

// union gives the set that the union of its sets, sorted and cut to
// maxSetHolders, is: its shortcuts (a subset, a cut set that keeps what it
// has) agree with interning the union itself.
func TestUnionAgreesWithIntern(t *testing.T) {
	s := &shareIndex{setIndex: map[uint64]uint32{}, setEnd: []uint32{0, 0}, hash: setHash}
	rng := rand.New(rand.NewPCG(9, 9))
	var sets []uint32
	for range 300 {
		ids := make([]uint32, rng.IntN(2*maxSetHolders+3))
		for i := range ids {
			ids[i] = uint32(rng.IntN(60))
		}
		slices.Sort(ids)
		sets = append(sets, s.intern(ids, maxSetHolders))
	}
	for range 20000 {
		x, y := sets[rng.IntN(len(sets))], sets[rng.IntN(len(sets))]
		got := s.union(x, y)
		want := x
		if !s.cut(x) {
			u := slices.Concat(s.members(x), s.members(y))
			slices.Sort(u)
			want = s.intern(u, maxSetHolders)
		}
		if got != want {
			t.Fatalf("union of %v and %v: %v, want %v", s.members(x), s.members(y), s.members(got), s.members(want))
		}
		sets = append(sets, got)
	}
}

// The sets flow to what a search from every top gives: on random graphs
// of flow edges with cycles, most edges going up in rank or most down,
// each top whose set was not cut holds exactly the seeds of the tops that
// reach it, and a set is cut when those are more than maxSetHolders.
func TestFlowAsSearched(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 40 {
		n := 2 + rng.IntN(300)
		m := rng.IntN(3 * n)
		holders := 1 + rng.IntN(40)
		seeds := make([][]uint32, n)
		for k := range seeds {
			for range rng.IntN(3) {
				seeds[k] = append(seeds[k], uint32(rng.IntN(holders)))
			}
			slices.Sort(seeds[k])
		}
		fwd := make([][]uint32, n)
		for range m {
			src, to := rng.IntN(n), rng.IntN(n)
			if round%2 == 1 && src < to {
				src, to = to, src // most edges go down, some up
			}
			if src != to && rng.IntN(10) > 0 {
				fwd[src] = append(fwd[src], uint32(to))
			}
		}
		// What reaches each top, by a search from each.
		want := make([][]uint32, n)
		for k := range n {
			seen := make([]bool, n)
			stack := []int{k}
			seen[k] = true
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				want[v] = append(want[v], seeds[k]...)
				for _, to := range fwd[v] {
					if !seen[to] {
						seen[to] = true
						stack = append(stack, int(to))
					}
				}
			}
		}
		s := &shareIndex{setIndex: map[uint64]uint32{}, setEnd: []uint32{0, 0}, hash: setHash, set: make([]uint32, n)}
		var flat, start []uint32
		for k := range n {
			s.set[k] = s.intern(slices.Clone(seeds[k]), maxSetHolders)
			start = append(start, uint32(len(flat)))
			flat = append(flat, fwd[k]...)
		}
		start = append(start, uint32(len(flat)))
		s.flow(flat, start)
		for k := range n {
			w := slices.Compact(slices.Sorted(slices.Values(want[k])))
			x := s.set[k]
			if s.cut(x) != (len(w) > maxSetHolders) || !s.cut(x) && !slices.Equal(s.members(x), w) {
				t.Fatalf("round %d: top %d holds %v, want %v", round, k, s.members(x), w)
			}
		}
	}
}

// The shared tops are the objects the super-root immediately dominates,
// but the goroutines' runtime.g, which the runtime holds (allgs and the
// goroutine's own root both reach each one).
func TestSharedTops(t *testing.T) {
	t.Parallel()
	a := runPile(t, "goroutines", 300).analyze(t)
	s := a.shares()
	sr := a.g.SuperRoot()
	gs, shared := 0, 0
	for v := range heapdump.NodeID(a.g.NumNodes()) {
		_, isG := a.gObject(v)
		want := a.g.IsObject(v) && a.Idom(v) == sr && !isG
		if got := s.isShared(v); got != want {
			t.Errorf("node %d (object %v, goroutine %v, idom %d): shared top %v, want %v", v, a.g.IsObject(v), isG, a.Idom(v), got, want)
		}
		if isG && a.Idom(v) == sr {
			gs++
		}
		if want {
			shared++
		}
	}
	if gs < 300 || shared == 0 {
		t.Errorf("%d runtime.g and %d other objects the super-root holds, want 300 or more and some", gs, shared)
	}
}
