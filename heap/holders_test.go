package heap

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/dumptest"
	"github.com/ctxleak/ctxleak/internal/testbuild"
)

// The holder tests build testdata/holders (one retention pattern per run,
// around a 2 MiB payload), run it to write a real heap dump, and check
// what the analysis says against what the program knows of itself.

const payloadSize = 2 << 20

var (
	holdersOnce sync.Once
	holdersExe  map[string]string // by build: "" (plain), "stripped"
	holdersErr  error
)

// holdersProg returns the test program built plainly or stripped.
func holdersProg(t testing.TB, build string) string {
	t.Helper()
	dir := dumptest.TempDir(t)
	holdersOnce.Do(func() { buildHolders(dir) })
	if holdersErr != nil {
		t.Fatal(holdersErr)
	}
	return holdersExe[build]
}

// buildHolders builds testdata/holders into dir, plainly and stripped.
func buildHolders(dir string) {
	// The two builds share the compiled packages and link at once.
	builds := []struct{ name, ldflags string }{{"", ""}, {"stripped", "-s -w"}}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, b := range builds {
		wg.Go(func() {
			exe := filepath.Join(dir, "holders"+b.name)
			out, err := testbuild.Build(exe, nil, "-ldflags="+b.ldflags, "./testdata/holders")
			if err != nil {
				errs[i] = fmt.Errorf("%v\n%s", err, out)
			}
		})
	}
	wg.Wait()
	if holdersErr = errors.Join(errs...); holdersErr != nil {
		return
	}
	holdersExe = map[string]string{}
	for _, b := range builds {
		holdersExe[b.name] = filepath.Join(dir, "holders"+b.name)
	}
}

// patternRun is what testdata/holders printed about itself.
type patternRun struct {
	Pattern     string   `json:"pattern"`
	HeapAlloc   uint64   `json:"heap_alloc"`
	PayloadAddr uint64   `json:"payload_addr"`
	Goroutine   uint64   `json:"goroutine"`
	Goroutines  []uint64 `json:"goroutines"`
	dump, exe   string
}

var (
	patternMu   sync.Mutex
	patternRuns = map[string]*patternRun{}
)

// runPattern runs the test program once per pattern and test binary.
func runPattern(t testing.TB, pattern string) *patternRun {
	t.Helper()
	return runPatternBuild(t, pattern, "")
}

// runPatternBuild runs the test program built as build ("" or "stripped")
// once per pattern, build and test binary: a dump can be analysed only
// with the executable that wrote it.
func runPatternBuild(t testing.TB, pattern, build string) *patternRun {
	t.Helper()
	exe := holdersProg(t, build)
	patternMu.Lock()
	defer patternMu.Unlock()
	key := pattern + "/" + build
	if r, ok := patternRuns[key]; ok {
		return r
	}
	dump := filepath.Join(dumptest.TempDir(t), "holders-"+pattern+build+".dump")
	out, err := exec.Command(exe, pattern, dump).Output()
	if err != nil {
		t.Fatalf("holders %s: %v", pattern, err)
	}
	r := &patternRun{dump: dump, exe: exe}
	if err := json.Unmarshal(out, r); err != nil {
		t.Fatalf("holders %s printed %q: %v", pattern, out, err)
	}
	patternRuns[key] = r
	return r
}

// analyze analyses the dump of r with the executable built as build
// ("" or "stripped"), or without one for build "none".
func (r *patternRun) analyze(t testing.TB, build string) *Analysis {
	t.Helper()
	var bin *binsym.Binary
	if build != "none" {
		bin = openShared(t, holdersProg(t, build))
	}
	a, err := Analyze(r.dump, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// payloadGroup returns the report entry of the payload, failing if there is
// none or it is not the payload, a []uint8 of payloadSize bytes.
func payloadGroup(t *testing.T, a *Analysis) *Group {
	t.Helper()
	rep, err := a.Holders()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		if g.Object.Size >= payloadSize {
			return g
		}
	}
	t.Fatalf("no group for the payload in %d groups", len(rep.Groups))
	return nil
}

// pathTypes lists the types along a group's path.
func pathTypes(g *Group) []string {
	var out []string
	for _, s := range g.Path {
		out = append(out, s.Type)
	}
	return out
}

// containsInOrder reports whether want appears in have in this order.
func containsInOrder(have, want []string) bool {
	i := 0
	for _, h := range have {
		if i < len(want) && h == want[i] {
			i++
		}
	}
	return i == len(want)
}

func TestHolders(t *testing.T) {
	for _, tt := range []struct {
		pattern  string
		kind     heapdump.RootKind
		function string // regexp on Root.Function
		global   string
		types    []string // in order along the path
	}{
		// The ctx is an argument of waitThenUse, in its caller's outargs area:
		// the callee, not the caller, holds it.
		{"goroutine", heapdump.RootFrame, `^main\.waitThenUse$`, "",
			[]string{"context.valueCtx", "main.Upload", "[]uint8"}},
		{"without-cancel", heapdump.RootFrame, `^main\.background$`, "",
			[]string{"context.withoutCancelCtx", "context.valueCtx", "main.Upload", "[]uint8"}},
		{"blocked-sender", heapdump.RootFrame, `^main\.sender$`, "",
			[]string{"context.valueCtx", "main.Upload", "[]uint8"}},
		{"lost-cancel", heapdump.RootGlobal, "", "main.appCtx",
			[]string{"context.cancelCtx", "context.cancelCtx", "context.valueCtx", "main.Upload", "[]uint8"}},
		{"timeout", heapdump.RootTimer, `^context\.WithDeadlineCause\.func\d+$`, "",
			[]string{"context.timerCtx", "context.valueCtx", "main.Upload", "[]uint8"}},
		{"afterfunc", heapdump.RootGlobal, "", "main.appCtx",
			[]string{"context.cancelCtx", "context.afterFuncCtx", "closure main.main.func1", "context.valueCtx", "[]uint8"}},
		{"timer-closure", heapdump.RootTimer, `scheduleRetry\.func\d+$`, "",
			[]string{"context.valueCtx", "main.Upload", "[]uint8"}},
		{"global-cache", heapdump.RootGlobal, "", "main.cache",
			[]string{"map[string]context.Context", "context.valueCtx", "main.Upload", "[]uint8"}},
		{"http-request", heapdump.RootFrame, `^main\.main\.func\d+\.1$`, "",
			[]string{"context.valueCtx", "main.Upload", "[]uint8"}},
	} {
		t.Run(tt.pattern, func(t *testing.T) {
			r := runPattern(t, tt.pattern)
			a := r.analyze(t, "")
			g := payloadGroup(t, a)
			root := g.Root
			if root.Kind != tt.kind {
				t.Errorf("holder kind %q, want %q: %+v", root.Kind, tt.kind, root)
			}
			if tt.function != "" && !regexp.MustCompile(tt.function).MatchString(root.Function) {
				t.Errorf("holder function %q, want %s", root.Function, tt.function)
			}
			if tt.global != "" && root.Global != tt.global {
				t.Errorf("holder global %q, want %q", root.Global, tt.global)
			}
			if types := pathTypes(g); !containsInOrder(types, tt.types) {
				t.Errorf("path types %q, want %q in order", types, tt.types)
			}
			if r.Goroutine != 0 && root.Goroutine != r.Goroutine {
				t.Errorf("holder goroutine %d, want %d", root.Goroutine, r.Goroutine)
			}
			if root.Kind == heapdump.RootFrame && (root.Location == nil || root.CreatedBy == nil) {
				t.Errorf("frame holder without location or creation site: %+v", root)
			}
			if root.Kind == heapdump.RootTimer && (root.Creator == nil || root.Creator.Function != "main.main") {
				t.Errorf("timer creator %v, want main.main", root.Creator)
			}
			if g.Object.Addr != fmt.Sprintf("%#x", r.PayloadAddr) {
				t.Errorf("object at %s, want the payload at %#x", g.Object.Addr, r.PayloadAddr)
			}
			if s := g.Object.AllocSite; s == nil || s.Function != "main.newPayload" || !strings.HasSuffix(s.File, "holders/main.go") {
				t.Errorf("alloc site %v, want main.newPayload in holders/main.go", s)
			}
			if g.RetainedBytes != payloadSize || g.Count != 1 {
				t.Errorf("group retains %d bytes in %d objects, want the payload once", g.RetainedBytes, g.Count)
			}
			if !within(root.RetainedBytes, payloadSize, 0.01) && !g.Shared {
				t.Errorf("holder retains %d bytes, want within 1%% of %d", root.RetainedBytes, payloadSize)
			}
			if !within(a.stats.LiveBytes, r.HeapAlloc, 0.01) {
				t.Errorf("live bytes %d, HeapAlloc %d: more than 1%% apart", a.stats.LiveBytes, r.HeapAlloc)
			}
		})
	}
}

// within reports whether got is within frac of want.
func within(got, want uint64, frac float64) bool {
	return math.Abs(float64(got)-float64(want)) <= frac*float64(want)
}

// A leaked goroutine that no longer uses its context does not hold it: the
// payload is garbage in the dump, and no holder is reported.
func TestHoldersDeadContext(t *testing.T) {
	r := runPattern(t, "dead-ctx")
	a := r.analyze(t, "")
	rep, err := a.Holders()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		t.Errorf("group reported: %s", g.Text("", PlainStyle{}))
	}
	gs, err := a.Explain([]uint64{r.PayloadAddr})
	if err != nil {
		t.Fatal(err)
	}
	if gs[0] != nil {
		t.Errorf("Explain found a holder of the dead payload: %+v", gs[0].Root)
	}
	// The GC that ran before the dump freed the payload's span; if it is
	// still in the dump, it must not be live.
	if v, ok := a.g.Find(r.PayloadAddr); ok && a.reachable(v) {
		t.Errorf("the dead payload is live")
	}
	if !within(a.stats.LiveBytes, r.HeapAlloc, 0.01) {
		t.Errorf("live bytes %d, HeapAlloc %d", a.stats.LiveBytes, r.HeapAlloc)
	}
}

// pprof labels live in the goroutine's runtime.g, which names the goroutine.
func TestHoldersPprofLabels(t *testing.T) {
	r := runPattern(t, "pprof-label")
	a := r.analyze(t, "")
	g := payloadGroup(t, a)
	if g.Root.Kind != heapdump.RootGoroutine || g.Root.Goroutine != r.Goroutine {
		t.Errorf("holder %+v, want goroutine %d", g.Root, r.Goroutine)
	}
	if types := pathTypes(g); !containsInOrder(types, []string{"runtime.g", "runtime/pprof.labelMap", "string"}) {
		t.Errorf("path types %q", types)
	}
}

// A stripped executable (go run, go test) still names frames, closures and
// types; only globals lose their names.
func TestHoldersStripped(t *testing.T) {
	for _, tt := range []struct {
		pattern  string
		kind     heapdump.RootKind
		function string
	}{
		{"goroutine", heapdump.RootFrame, "main.waitThenUse"},
		{"timeout", heapdump.RootTimer, "context.WithDeadlineCause.func2"},
		{"global-cache", heapdump.RootGlobal, ""},
	} {
		t.Run(tt.pattern, func(t *testing.T) {
			a := runPatternBuild(t, tt.pattern, "stripped").analyze(t, "stripped")
			g := payloadGroup(t, a)
			if g.Root.Kind != tt.kind || g.Root.Function != tt.function {
				t.Errorf("holder %s %q, want %s %q", g.Root.Kind, g.Root.Function, tt.kind, tt.function)
			}
			if tt.kind == heapdump.RootGlobal && !strings.HasPrefix(g.Root.Global, "0x") {
				t.Errorf("global named %q without a symbol table", g.Root.Global)
			}
			if types := pathTypes(g); !containsInOrder(types, []string{"context.valueCtx", "main.Upload", "[]uint8"}) {
				t.Errorf("path types %q", types)
			}
			if !slices.ContainsFunc(a.Unknown, func(u Unknown) bool { return strings.Contains(u.Text, "symbol table") }) {
				t.Errorf("Unknown does not mention the missing symbol table: %q", a.Unknown)
			}
		})
	}
}

// Without the executable the report says so, and does not guess: the
// frame that holds the ctx may be the caller or its callee.
func TestHoldersWithoutBinary(t *testing.T) {
	a := runPattern(t, "goroutine").analyze(t, "none")
	g := payloadGroup(t, a)
	if !g.Root.Unsure || g.Root.Callee != "main.waitThenUse" {
		t.Errorf("holder %+v: want unsure between a caller and its callee main.waitThenUse", g.Root)
	}
	if g.Root.Location != nil || g.Root.CreatedBy != nil {
		t.Errorf("source positions without an executable: %+v", g.Root)
	}
	for _, s := range g.Path {
		if s.Type != "" {
			t.Errorf("a type without an executable: %q", s.Type)
		}
	}
	if len(a.Unknown) == 0 {
		t.Error("Unknown is empty without an executable")
	}
}

// The executable must be the one that wrote the dump.
func TestAnalyzeWrongBinary(t *testing.T) {
	r := runPattern(t, "goroutine")
	other, err := binsym.Open(dumpProg(t))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if a, err := Analyze(r.dump, other); err == nil {
		a.Close()
		t.Fatal("Analyze accepted an executable that did not write the dump")
	} else if !strings.Contains(err.Error(), "not the executable that wrote the dump") {
		t.Errorf("error %q", err)
	}
}

// Focus, Top and MinSize select groups.
func TestHoldersOptions(t *testing.T) {
	a := runPattern(t, "goroutine").analyze(t, "")
	for _, tt := range []struct {
		name string
		opts []Option
		want int
	}{
		{"none", nil, 1},
		{"focus waitThenUse", []Option{Focus(regexp.MustCompile(`waitThenUse`))}, 1},
		{"focus newPayload", []Option{Focus(regexp.MustCompile(`newPayload`))}, 1},
		{"focus valueCtx", []Option{Focus(regexp.MustCompile(`valueCtx`))}, 1},
		{"focus nothing", []Option{Focus(regexp.MustCompile(`^nothing$`))}, 0},
		{"min size payload+1", []Option{MinSize(payloadSize + 1)}, 1}, // the frame's holding: the payload and its context
		{"min size 2 payloads", []Option{MinSize(2 * payloadSize)}, 0},
		{"min size 1KiB, top 1", []Option{MinSize(1 << 10), Top(1)}, 1},
	} {
		rep, err := a.Holders(tt.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Groups) != tt.want {
			t.Errorf("%s: %d groups, want %d", tt.name, len(rep.Groups), tt.want)
		}
	}
}

func TestDumpMode(t *testing.T) {
	// Dumps hold every byte of a process: the ones the tests write are
	// 0600, as the test program writes them.
	r := runPattern(t, "goroutine")
	fi, err := os.Stat(r.dump)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("dump mode %v", fi.Mode())
	}
}

// Large objects inside a large object: each is an entry, objects held at
// different indices of the same array are one group, and the small global
// struct that holds them all is not an entry of its own (what it retains
// is all in the large objects).
func TestHoldersNested(t *testing.T) {
	a := runPattern(t, "nested").analyze(t, "")
	rep, err := a.Holders()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range rep.Groups {
		got = append(got, fmt.Sprintf("%s x%d %d", g.Object.Type, g.Count, g.RetainedBytes))
		if g.Root.Global != "main.nested" {
			t.Errorf("holder %+v, want global main.nested", g.Root)
		}
	}
	want := []string{"[]*[1048576]uint8 x1 3145728", "[1048576]uint8 x2 2097152"}
	if !slices.Equal(got, want) {
		t.Errorf("groups %q, want %q", got, want)
	}
}
