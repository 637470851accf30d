package heap

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// The tests of holders that are runtime records rather than frames or
// globals (testdata/piles/roots.go): defer records, panics and timers,
// with and without the executable.

// analyzeWithout analyses the run's dump without the executable.
func (r *pileRun) analyzeWithout(t testing.TB) *Analysis {
	t.Helper()
	a, err := Analyze(r.dump, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// holdersAt reports the holders of a with MinSize(min), their held_by
// checked (checkHeldBy).
func holdersAt(t *testing.T, a *Analysis, min uint64) *Report {
	t.Helper()
	rep, err := a.Holders(MinSize(min))
	if err != nil {
		t.Fatal(err)
	}
	checkHeldBy(t, rep)
	return rep
}

// onePileGroup analyses run r with its executable or without, and returns
// the analysis, its report at 1 MiB and the report's group, failing unless
// it has exactly one.
func onePileGroup(t *testing.T, r *pileRun, withBinary bool) (*Analysis, *Report, *Group) {
	t.Helper()
	a := r.analyzeWithout(t)
	if withBinary {
		a = r.analyze(t)
	}
	rep := holdersAt(t, a, 1<<20)
	if len(rep.Groups) != 1 {
		t.Fatalf("binary %v: %d groups, want 1:\n%s", withBinary, len(rep.Groups), reportText(t, rep))
	}
	return a, rep, rep.Groups[0]
}

// hasTimer reports whether one of hs is a timer whose function starts with
// prefix.
func hasTimer(hs []Holder, prefix *regexp.Regexp) bool {
	return slices.ContainsFunc(hs, func(h Holder) bool {
		return h.Kind == heapdump.RootTimer && prefix.MatchString(h.Function)
	})
}

// initFunc matches the closures of the init function of
// testdata/piles/roots.go: main.init.N, N by the order of the files with
// init functions.
func initFunc(closure string) *regexp.Regexp {
	return regexp.MustCompile(`^main\.init\.\d+\.` + closure)
}

// 2,000 pending `defer cancel()` in one frame, each cancel holding a
// timerCtx over a 512-byte value that its timer holds too: one group of
// the contexts, each with its defer and its timer (one mechanism), which
// names the timers among the other holders.
func TestHoldersPileOfDefers(t *testing.T) {
	t.Parallel()
	const n = 2000
	r := runPile(t, "defers", n)
	for _, withBinary := range []bool{true, false} {
		a, rep, g := onePileGroup(t, r, withBinary)
		if g.Root.Kind != heapdump.RootDefer || g.Root.Function != "main.loop" || g.Count != n || g.GoroutineCount != 1 {
			t.Errorf("binary %v: %d held by %+v (%d goroutines), want %d held by defers in main.loop of one goroutine", withBinary, g.Count, g.Root, g.GoroutineCount, n)
		}
		// Each: a timerCtx, a valueCtx, the value's slice header and 512
		// bytes; its defer record and closure (64 bytes), its timer and
		// the timer's closure (144).
		if g.RetainedBytes < n*(512+112+48+64+144) || g.RetainedBytes > n*1200 {
			t.Errorf("binary %v: retained %d bytes, want about %d", withBinary, g.RetainedBytes, n*900)
		}
		if m := g.Mechanism; m == nil || m.Kind != MechDeferTimer || m.Defers != n || m.Timers != n || m.Function != "main.loop" ||
			m.DeferBytes < n*64 || m.DeferBytes+m.TimerBytes+m.SharedBytes != g.RetainedBytes {
			t.Errorf("binary %v: mechanism %+v of a group retaining %d, want %d defers of main.loop and %d timers adding up to it", withBinary, g.Mechanism, g.RetainedBytes, n, n)
		}
		if !hasTimer(g.OtherRoots, regexp.MustCompile(`^`)) {
			t.Errorf("binary %v: other holders %+v, want the timers", withBinary, g.OtherRoots)
		}
		text := reportText(t, rep)
		want := fmt.Sprintf("#1 2,000 pending defer cancel() in main.loop (goroutine %d), each with its timer, hold %s: 2,000 x ", g.Root.Goroutine, bytesize.Format(int64(g.RetainedBytes)))
		if withBinary {
			want += "context.timerCtx of 112 B"
			if !hasTimer(g.OtherRoots, regexp.MustCompile(`^context\.`)) {
				t.Errorf("other holders %+v, want a timer of package context", g.OtherRoots)
			}
		}
		if !strings.Contains(text, want) || !strings.Contains(text, "also reached from timer") {
			t.Errorf("binary %v: no %q and timer in\n%s", withBinary, want, text)
		}
		// The defer records themselves, 48 bytes and a closure each, and
		// the timers are in that group, not groups of their own.
		rep = holdersAt(t, a, 32<<10)
		if i := slices.IndexFunc(rep.Groups, func(h *Group) bool {
			return h != g && h.Mechanism == nil && (h.Root.Function == "main.loop" || h.Root.Kind == heapdump.RootTimer)
		}); i >= 0 {
			t.Errorf("binary %v: a group of the defers or timers apart:\n%s", withBinary, reportText(t, rep))
		}
	}
}

// The same loop, each context cancelled at once and each defer holding
// only its index: nothing to report.
func TestHoldersCleanDefers(t *testing.T) {
	t.Parallel()
	r := runPile(t, "cleandefers", 2000)
	for _, a := range []*Analysis{r.analyze(t), r.analyzeWithout(t)} {
		if rep := holdersAt(t, a, 1<<20); rep.GroupsTotal != 0 {
			t.Errorf("%d groups in a clean program:\n%s", rep.GroupsTotal, reportText(t, rep))
		}
	}
}

// 2,000 contexts with a timeout, never cancelled: one timer group, with
// the executable or without.
func TestHoldersPileOfTimers(t *testing.T) {
	t.Parallel()
	const n = 2000
	r := runPile(t, "timers", n)
	for _, withBinary := range []bool{true, false} {
		_, rep, g := onePileGroup(t, r, withBinary)
		if g.Root.Kind != heapdump.RootTimer || g.Count != n || g.Root.RetainedBytes == 0 {
			t.Errorf("binary %v: %d held by %+v, want %d held by timers that retain something", withBinary, g.Count, g.Root, n)
		}
		if g.RetainedBytes < n*(512+112+48) || g.RetainedBytes > n*1024 {
			t.Errorf("binary %v: retained %d bytes, want about %d", withBinary, g.RetainedBytes, n*700)
		}
		if g.Root.Creator == nil || !initFunc(`func3$`).MatchString(g.Root.Creator.Function) {
			t.Errorf("binary %v: timer created at %v, want main.init.N.func3", withBinary, g.Root.Creator)
		}
		text := reportText(t, rep)
		want := fmt.Sprintf("#1 2,000 timers hold %s", bytesize.Format(int64(g.RetainedBytes)))
		if withBinary {
			want = fmt.Sprintf("#1 2,000 timers that will run %s hold %s: 2,000 x closure %[1]s", g.Root.Function, bytesize.Format(int64(g.RetainedBytes)))
			if !strings.HasPrefix(g.Root.Function, "context.") {
				t.Errorf("the timers run %q, want a function of package context", g.Root.Function)
			}
			if !slices.ContainsFunc(g.MadeOf, func(p Part) bool { return p.Type == "context.timerCtx" }) {
				t.Errorf("made of %+v, want a context.timerCtx", g.MadeOf)
			}
		}
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}

// A payload that a goroutine holds and an idle timer's closure holds too:
// the timer is among its other holders.
func TestHoldersIdleTimer(t *testing.T) {
	t.Parallel()
	r := runPile(t, "idletimer", 1)
	for _, withBinary := range []bool{true, false} {
		a := r.analyzeWithout(t)
		prefix := regexp.MustCompile(`^`)
		if withBinary {
			a, prefix = r.analyze(t), initFunc(`func4\.`)
		}
		g := payloadGroupAt(t, holdersAt(t, a, 1<<20), r.PayloadAddr)
		if g.Root.Kind != heapdump.RootFrame || g.RetainedBytes != 2<<20 {
			t.Errorf("binary %v: held by %+v retaining %d, want a frame retaining 2 MiB", withBinary, g.Root, g.RetainedBytes)
		}
		if !g.Shared || g.OtherRootsTotal != 1 || !hasTimer(g.OtherRoots, prefix) {
			t.Errorf("binary %v: shared %v with %+v, want the timer running %s...", withBinary, g.Shared, g.OtherRoots, prefix)
		}
	}
}

// payloadGroupAt returns the group of the object at addr.
func payloadGroupAt(t *testing.T, rep *Report, addr uint64) *Group {
	t.Helper()
	for _, g := range rep.Groups {
		if g.Object.Addr == fmt.Sprintf("%#x", addr) {
			return g
		}
	}
	t.Fatalf("no group for the object at %#x:\n%s", addr, reportText(t, rep))
	return nil
}

// Forty values of 1 MiB in one global map, without the executable: one
// group held by one global.
func TestHoldersGlobalMapWithoutBinary(t *testing.T) {
	t.Parallel()
	const n = 40
	rep := holdersAt(t, runPile(t, "globalmap", n).analyzeWithout(t), 1<<20)
	if len(rep.Groups) != 1 {
		t.Fatalf("%d groups, want 1:\n%s", len(rep.Groups), reportText(t, rep))
	}
	g := rep.Groups[0]
	if g.Root.Kind != heapdump.RootGlobal || g.Count != n || g.RetainedBytes != n<<20 {
		t.Errorf("%d objects retaining %d bytes held by %+v, want %d of 1 MiB held by a global", g.Count, g.RetainedBytes, g.Root, n)
	}
}

// A panic in progress whose value holds a payload: the panic holds it,
// not runtime.gopanic's frame.
func TestHoldersPanicValue(t *testing.T) {
	t.Parallel()
	r := runPile(t, "panics", 1)
	g := payloadGroupAt(t, holdersAt(t, r.analyze(t), 1<<20), r.PayloadAddr)
	if g.Root.Kind != heapdump.RootPanic || g.Root.Goroutine == 0 || g.Shared || g.RetainedBytes != 2<<20 {
		t.Errorf("held by %+v (shared %v with %+v) retaining %d, want a panic retaining 2 MiB", g.Root, g.Shared, g.OtherRoots, g.RetainedBytes)
	}
	if want := fmt.Sprintf("held by a panic in goroutine %d", g.Root.Goroutine); !strings.Contains(g.Text("", PlainStyle{}), want) {
		t.Errorf("no %q in\n%s", want, g.Text("", PlainStyle{}))
	}
}

// Forty values of 1 MiB in one global array of pointers: one group, with
// the executable (one global) or without it (one run of pointer slots).
func TestHoldersGlobalArray(t *testing.T) {
	t.Parallel()
	const n = 40
	r := runPile(t, "globalarray", n)
	for _, withBinary := range []bool{true, false} {
		_, _, g := onePileGroup(t, r, withBinary)
		if g.Root.Kind != heapdump.RootGlobal || g.Count != n || g.RetainedBytes != n<<20 || (withBinary && g.Root.Global != "main.buffers") {
			t.Errorf("binary %v: %d objects retaining %d bytes held by %+v, want %d of 1 MiB held by main.buffers", withBinary, g.Count, g.RetainedBytes, g.Root, n)
		}
	}
}
