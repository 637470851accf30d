package heap

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
)

// The tests of realworld_mech.go's patterns: one mechanism held by
// several roots, which the report must show as one.

// rwMechReport runs pattern with n and returns its report at minSize, its
// text and its JSON groups, decoded without the package's types.
func rwMechReport(t *testing.T, pattern string, n int, minSize uint64) (*Report, string, []map[string]any) {
	t.Helper()
	exe := realPiles(t)
	dump := filepath.Join(t.TempDir(), fmt.Sprintf("piles-real-%s-%d.dump", pattern, n))
	if out, err := exec.Command(exe, pattern, fmt.Sprint(n), dump).CombinedOutput(); err != nil {
		t.Fatalf("piles %s %d: %v\n%s", pattern, n, err, out)
	}
	a, err := Analyze(dump, openShared(t, exe), MinSize(minSize))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	rep := checkedHolders(t, a) // the report's arithmetic, too
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return rep, reportText(t, rep), doc.Groups
}

// A loop that defers the cancel of a WithTimeout context each time round
// and never returns: the defers, the contexts and their timers are one
// group whose total is all they retain.
func TestHoldersRealWorldDeferLoop(t *testing.T) {
	t.Parallel()
	const n = 3000
	// Each part alone passes MinSize: the defer records (64 B each), the
	// contexts (112 B), the timers' closures (32 B).
	rep, text, groups := rwMechReport(t, "rw-deferloop", n, n*16)
	var mech []*Group
	for _, g := range rep.Groups {
		if g.Root.Function == "main.parse" || strings.HasPrefix(g.Root.Function, "context.") {
			mech = append(mech, g)
		}
	}
	if len(mech) != 1 {
		t.Fatalf("%d groups of main.parse's defers and their timers, want 1:\n%s", len(mech), text)
	}
	g := mech[0]
	// A defer record, its closure, the context, the timer and its closure:
	// 48+16+112+112+32 bytes on 64-bit Go 1.22 to 1.27.
	if g.Count != n || g.RetainedBytes < n*300 || g.RetainedBytes > n*400 {
		t.Errorf("%d objects retaining %d bytes, want %d retaining %d to %d:\n%s", g.Count, g.RetainedBytes, n, n*300, n*400, text)
	}
	// The timers' own objects, folded in, are no other group's.
	var all uint64
	for _, g := range rep.Groups {
		all += g.RetainedBytes
	}
	if all > rep.LiveBytes {
		t.Errorf("the groups add up to %d bytes, more than the %d live:\n%s", all, rep.LiveBytes, text)
	}
	want := fmt.Sprintf("#1 %s pending defer cancel() in main.parse (goroutine %d), each with its timer, hold ", thousands(n), g.Root.Goroutine)
	if !strings.Contains(text, want) {
		t.Errorf("no %q in\n%s", want, text)
	}
	var js map[string]any
	for _, j := range groups {
		if r, _ := j["root"].(map[string]any); r["function"] == "main.parse" {
			js = j
		}
	}
	m, _ := js["mechanism"].(map[string]any)
	if m == nil {
		t.Fatalf("no mechanism in the JSON group of main.parse: %v", js)
	}
	if m["defer_count"] != float64(n) || m["timer_count"] != float64(n) || m["function"] != "main.parse" {
		t.Errorf("mechanism %v, want %d defers and %d timers of main.parse", m, n, n)
	}
	sum := m["defer_retained_bytes"].(float64) + m["timer_retained_bytes"].(float64) + m["shared_retained_bytes"].(float64)
	if sum != js["retained_bytes"].(float64) {
		t.Errorf("the parts of %v add up to %v, not the group's %v", m, sum, js["retained_bytes"])
	}
	checkHeldBy(t, rep)
}

// Defers of one frame, half of which point to contexts a global holds
// too (no timer: not a mechanism to fold), are one group, as they were
// before mechanisms.
func TestHoldersRealWorldDeferLoopMixed(t *testing.T) {
	t.Parallel()
	const n = 2000
	rep, text, _ := rwMechReport(t, "rw-deferloopmixed", n, n*16)
	var defers []*Group
	for _, g := range rep.Groups {
		if g.Root.Function == "main.parseMixed" && g.Object.Type == "runtime._defer" {
			defers = append(defers, g)
		}
		if g.Mechanism != nil {
			t.Errorf("a mechanism folded without timers:\n%s", text)
		}
	}
	if len(defers) != 1 || defers[0].Count != 2*n {
		t.Errorf("%d groups of main.parseMixed's defer records, want 1 of %d:\n%s", len(defers), 2*n, text)
	}
	checkHeldBy(t, rep)
}

// An errgroup's context under the global main.serverCtx, never cancelled,
// with 50 tasks blocked: the global is named among its holders, in text
// and in JSON.
func TestHoldersRealWorldErrgroupCtx(t *testing.T) {
	t.Parallel()
	rep, text, groups := rwMechReport(t, "rw-errgroupctx", rwN, rwN*typingItem/2)
	var g *Group
	for _, c := range rep.Groups {
		if c.Object.Type == "[]uint8" && c.Object.Size >= rwN*typingItem {
			g = c
		}
	}
	if g == nil {
		t.Fatalf("no group of the request body:\n%s", text)
	}
	for _, want := range []string{"global main.serverCtx",
		"goroutines in main.upload created at golang.org/x/sync/errgroup.(*Group).Go",
		"goroutines in golang.org/x/sync/errgroup.(*Group).Go.func1 created at golang.org/x/sync/errgroup.(*Group).Go"} {
		if !slices.Contains(g.HeldBy, want) {
			t.Errorf("held_by %q, want %q in it", g.HeldBy, want)
		}
	}
	found := false
	for _, j := range groups {
		if o, _ := j["object"].(map[string]any); o["addr"] == g.Object.Addr {
			hb, _ := j["held_by"].([]any)
			found = len(hb) > 0 && hb[0] == "global main.serverCtx"
		}
	}
	if !found {
		t.Errorf("the JSON group of the request body is not held by global main.serverCtx first:\n%v", groups)
	}
	if !strings.Contains(g.Text("", PlainStyle{}), "also reached from global main.stopServer, global main.serverCtx, goroutine") &&
		!strings.Contains(g.Text("", PlainStyle{}), "also reached from global main.serverCtx, global main.stopServer, goroutine") {
		t.Errorf("the text does not name main.serverCtx and main.stopServer before the goroutines:\n%s", text)
	}
	checkHeldBy(t, rep)
}

// checkHeldBy checks every shared group's holders in rep and its JSON:
// every signature listed, none "more", globals and timers before the
// rest; and that no global or timer among the other roots is left out of
// the list when a goroutine is in it.
func checkHeldBy(t *testing.T, rep *Report) {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	groups := doc.Groups
	rank := func(s string) int {
		switch {
		case strings.HasPrefix(s, "global "):
			return 0
		case strings.HasPrefix(s, "timers"):
			return 1
		}
		return 2
	}
	for i, g := range rep.Groups {
		if slices.Contains(g.HeldBy, "more") {
			t.Errorf("group %d: held_by %q is cut", i+1, g.HeldBy)
		}
		if !slices.IsSortedFunc(g.HeldBy, func(x, y string) int { return rank(x) - rank(y) }) {
			t.Errorf("group %d: held_by %q: globals and timers not first", i+1, g.HeldBy)
		}
		js, _ := groups[i]["held_by"].([]any)
		if len(js) != len(g.HeldBy) {
			t.Errorf("group %d: JSON held_by %v, want %q", i+1, js, g.HeldBy)
		}
		// Other roots: globals and timers come before goroutines.
		seenOther := false
		for _, h := range g.OtherRoots {
			globalOrTimer := h.Kind == heapdump.RootGlobal || h.Kind == heapdump.RootTimer
			if globalOrTimer && seenOther {
				t.Errorf("group %d: other roots %v: a global or timer after a goroutine", i+1, g.OtherRoots)
			}
			seenOther = seenOther || !globalOrTimer
		}
	}
}

// A headline names at most maxHeldByText holder signatures, and counts
// the rest.
func TestHeldByText(t *testing.T) {
	sigs := []string{"global main.a", "timers that will run main.f", "goroutines in main.g", "goroutines in main.h", "goroutines in main.i"}
	if got := heldByText(sigs); !slices.Equal(got, sigs) {
		t.Errorf("heldByText(%q) = %q, want them all", sigs, got)
	}
	more := append(slices.Clone(sigs), "goroutines in main.j")
	want := []string{"global main.a", "timers that will run main.f", "goroutines in main.g", "goroutines in main.h", "2 more"}
	if got := heldByText(more); !slices.Equal(got, want) {
		t.Errorf("heldByText(%q) = %q, want %q", more, got, want)
	}
	if len(more) != 6 {
		t.Errorf("heldByText changed its argument: %q", more)
	}
}
