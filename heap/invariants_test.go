package heap

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// The report's arithmetic, checked on every fixture: no group retains more
// than the live heap; the groups add up to at most the live heap but for
// the overlap the report states; no member of a group retains another
// member of it; and what each member retains agrees with a reverse walk
// written apart from the dominator tree.

// checkedHolders builds the report of a with opts, recording the members
// of each group, checks its arithmetic (checkInvariants) and returns it.
func checkedHolders(t testing.TB, a *Analysis, opts ...Option) *Report {
	t.Helper()
	a.recordMembers = true
	defer func() { a.recordMembers = false }()
	rep, err := a.Holders(opts...)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, a, rep)
	return rep
}

// walkBudget bounds the nodes the reverse walks of one checkInvariants
// visit: one walk per member checked, each through the whole graph.
const walkBudget = 20_000_000

// checkInvariants checks the arithmetic of report rep of analysis a, which
// must have been built with a.recordMembers set (checkedHolders does it).
func checkInvariants(t testing.TB, a *Analysis, rep *Report) {
	t.Helper()
	if len(rep.members) != len(rep.Groups) {
		t.Fatalf("the report lists the members of %d of its %d groups: build it with recordMembers", len(rep.members), len(rep.Groups))
	}
	live := rep.LiveBytes
	var sum uint64
	for i, g := range rep.Groups {
		sum += g.RetainedBytes
		if g.RetainedBytes > live {
			t.Errorf("#%d retains %d bytes, more than the live heap's %d", i+1, g.RetainedBytes, live)
		}
	}
	over := reportOverlap(t, rep)
	if sum-min(sum, over) > live {
		t.Errorf("the groups add up to %d bytes, %d of them counted twice as the report says, more than the live heap's %d", sum, over, live)
	}
	// The members, by the dominator tree: which group each is in, and
	// whether another member retains it.
	group := map[heapdump.NodeID]int{}
	for i, ms := range rep.members {
		for _, v := range ms {
			if j, ok := group[v]; ok {
				t.Errorf("node %d is a member of #%d and #%d", v, j+1, i+1)
			}
			group[v] = i
		}
	}
	var inside uint64 // what members inside members of other groups retain
	pairs := map[[2]int]uint64{}
	steps := 0
	for i, ms := range rep.members {
		var counted uint64
		for _, v := range ms {
			counted += a.Retained(v)
			for d := a.Idom(v); d != heapdump.NoNode && d != a.g.SuperRoot() && steps < walkBudget; d = a.Idom(d) {
				steps++
				j, ok := group[d]
				if !ok {
					continue
				}
				if j == i {
					t.Errorf("#%d: member %d retains member %d: %d bytes counted twice", i+1, d, v, a.Retained(v))
				} else {
					inside += a.Retained(v)
					pairs[[2]int{i + 1, j + 1}] += a.Retained(v)
				}
				break
			}
		}
		if g := rep.Groups[i]; counted != g.RetainedBytes {
			t.Errorf("#%d retains %d bytes, its %d members %d", i+1, g.RetainedBytes, len(ms), counted)
		}
	}
	if steps < walkBudget && inside != over {
		t.Errorf("members inside other groups' members retain %d bytes, the report says the groups overlap by %d", inside, over)
	}
	if steps < walkBudget {
		for _, o := range rep.Overlaps {
			if b := pairs[[2]int{o.Group, o.Within}]; b != o.Bytes {
				t.Errorf("%d bytes of #%d are inside #%d, the report says %d", b, o.Group, o.Within, o.Bytes)
			}
		}
		if len(pairs) != len(rep.Overlaps) {
			t.Errorf("members of %d pairs of groups are inside one another, the report lists %d: %+v", len(pairs), len(rep.Overlaps), rep.Overlaps)
		}
	}
	checkReverseWalk(t, a, rep, group)
}

// checkReverseWalk checks, for as many members as walkBudget allows, the
// group's first ones first, that what the member retains is what no root
// reaches once it is removed, and that no other member of its group is in
// that.
func checkReverseWalk(t testing.TB, a *Analysis, rep *Report, group map[heapdump.NodeID]int) {
	t.Helper()
	n := a.g.NumNodes()
	base := reachWithout(a.g, heapdump.NoNode)
	var liveBytes uint64
	for v := range heapdump.NodeID(a.g.NumObjects()) {
		if has(base, v) {
			liveBytes += a.g.Size(v)
		}
	}
	if liveBytes != rep.LiveBytes {
		t.Errorf("the roots reach %d bytes, the report says %d live", liveBytes, rep.LiveBytes)
	}
	budget := walkBudget / max(n, 1)
	for round := 0; budget > 0; round++ {
		any := false
		for i, ms := range rep.members {
			if round >= len(ms) || budget == 0 {
				continue
			}
			any = true
			budget--
			v := ms[round]
			without := reachWithout(a.g, v)
			var lost uint64
			for u := range heapdump.NodeID(a.g.NumObjects()) {
				if has(base, u) && !has(without, u) {
					lost += a.g.Size(u)
					if j, ok := group[u]; ok && j == i && u != v {
						t.Errorf("#%d: no root reaches member %d without member %d", i+1, u, v)
					}
				}
			}
			if lost != a.Retained(v) {
				t.Errorf("#%d: member %d retains %d bytes, %d by the reverse walk", i+1, v, a.Retained(v), lost)
			}
		}
		if !any {
			break
		}
	}
}

// reachWithout returns the nodes the super-root reaches, through every
// edge, when node cut (NoNode for none) is removed: a breadth-first search
// that knows nothing of dominators.
func reachWithout(g *heapdump.Graph, cut heapdump.NodeID) []uint64 {
	seen := make([]uint64, (g.NumNodes()+63)/64)
	sr := g.SuperRoot()
	seen[sr/64] |= 1 << (sr % 64)
	queue := []heapdump.NodeID{sr}
	for len(queue) > 0 {
		u := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, w := range g.Succ(u) {
			if w == cut || has(seen, w) {
				continue
			}
			seen[w/64] |= 1 << (w % 64)
			queue = append(queue, w)
		}
	}
	return seen
}

func has(set []uint64, v heapdump.NodeID) bool { return set[v/64]&(1<<(v%64)) != 0 }

// reportOverlap is what the report says its groups count more than once.
// It must be what Overlaps adds up.
func reportOverlap(t testing.TB, rep *Report) uint64 {
	t.Helper()
	var sum uint64
	for _, o := range rep.Overlaps {
		if o.Group < 1 || o.Group > len(rep.Groups) || o.Within < 1 || o.Within > len(rep.Groups) || o.Group == o.Within {
			t.Errorf("overlap %+v names no pair of the report's %d groups", o, len(rep.Groups))
		}
		sum += o.Bytes
	}
	if sum != rep.OverlapBytes {
		t.Errorf("the overlaps add up to %d bytes, the report says %d", sum, rep.OverlapBytes)
	}
	return rep.OverlapBytes
}

// TestInvariants checks the report's arithmetic on the dumps of the test
// programs, the piles, the real-world reproductions and the dumps each Go
// release wrote, at the default MinSize and at a small one.
func TestInvariants(t *testing.T) {
	check := func(t *testing.T, a *Analysis, sizes ...uint64) {
		checkedHolders(t, a)
		for _, s := range sizes {
			checkedHolders(t, a, MinSize(s))
		}
	}
	t.Run("dumpprog", func(t *testing.T) {
		check(t, progDump(t, "-small").analyze(t), 1<<10)
	})
	for _, p := range []string{"goroutine", "without-cancel", "blocked-sender", "dead-ctx", "lost-cancel",
		"timeout", "afterfunc", "timer-closure", "global-cache", "guarded-cache", "pprof-label",
		"http-request", "nested", "three-uploads", "none"} {
		t.Run("holders/"+p, func(t *testing.T) {
			check(t, runPattern(t, p).analyze(t, ""), 64<<10)
		})
	}
	piles := []struct {
		pattern string
		n       int
		min     uint64
	}{
		{"goroutines", 50, 4 << 10}, {"shared", 50, 4 << 10}, {"list", 200, 1 << 10}, {"indexed", 60, 256},
		{"clean", 20, 256}, {"afterfunc", 50, 4 << 10}, {"series", 50, 4 << 10}, {"timeouts", 50, 4 << 10},
		{"shared3", 30, 4 << 10}, {"slice", 50, 4 << 10}, {"defers", 50, 4 << 10}, {"timers", 50, 4 << 10},
		{"globalmap", 50, 4 << 10}, {"globalarray", 50, 4 << 10}, {"panics", 1, 1 << 10},
		{"stackobj", 50, 4 << 10}, {"chain:65536", 40, 64 << 10}, {"chain:4096", 300, 4 << 10},
	}
	for _, p := range piles {
		t.Run(fmt.Sprintf("piles/%s-%d", p.pattern, p.n), func(t *testing.T) {
			check(t, runPile(t, p.pattern, p.n).analyze(t), p.min)
		})
	}
	for _, p := range []string{"rw-clean", "rw-globals", "rw-goroutines", "rw-net"} {
		t.Run("realworld/"+p, func(t *testing.T) {
			check(t, rwAnalyze(t, p), 1<<10)
		})
	}
	dirs, err := filepath.Glob("../testdata/go1.*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no per-version fixtures: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			work := t.TempDir()
			dump, exe := filepath.Join(work, "dump"), filepath.Join(work, "binary")
			dumptest.Gunzip(t, filepath.Join(dir, "dump.gz"), dump)
			dumptest.Gunzip(t, filepath.Join(dir, "binary.gz"), exe)
			b, err := binsym.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			a, err := Analyze(dump, b)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			check(t, a, 128<<10)
		})
	}
	if _, err := os.Stat("../testdata/go1.26"); err != nil {
		t.Errorf("no Go 1.26 fixture: %v", err)
	}
}

// A chain of large objects, each inside the one before: the group of those
// inside the first counts them once, with the outermost, and says how many
// are inside another; the report says that group is inside the first's.
func TestHoldersChainFolds(t *testing.T) {
	const n, size = 40, 64 << 10
	a := runPile(t, fmt.Sprintf("chain:%d", size), n).analyze(t)
	rep := checkedHolders(t, a, MinSize(size))
	if len(rep.Groups) < 2 {
		t.Fatalf("%d groups, want the first object and those inside it", len(rep.Groups))
	}
	first, rest := rep.Groups[0], rep.Groups[1]
	if first.Count != 1 || first.Root.Global != "main.chain" {
		t.Errorf("#1: %d objects held by %+v, want the first object of the chain held by main.chain", first.Count, first.Root)
	}
	if rest.Count != n-1 || rest.NestedCount != n-2 {
		t.Errorf("#2: %d objects, %d inside another: want %d, %d", rest.Count, rest.NestedCount, n-1, n-2)
	}
	if rest.RetainedBytes >= first.RetainedBytes || rest.RetainedBytes < (n-1)*size {
		t.Errorf("#2 retains %d bytes, want what %d objects of %d bytes retain, less than #1's %d", rest.RetainedBytes, n-1, size, first.RetainedBytes)
	}
	want := []Overlap{{Group: 2, Within: 1, Bytes: rest.RetainedBytes}}
	if !slices.Equal(rep.Overlaps, want) || rep.OverlapBytes != rest.RetainedBytes {
		t.Errorf("overlaps %+v (%d bytes), want %+v", rep.Overlaps, rep.OverlapBytes, want)
	}
	text := reportText(t, rep)
	for _, s := range []string{
		fmt.Sprintf("#2 %d objects held the same way, %d of them inside another, retain", n-1, n-2),
		"The groups overlap: ", "of #2 is inside #1",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("no %q in\n%s", s, text)
		}
	}
}
