package scenarios

import (
	"regexp"
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	s := &Scenario{
		Name: "x",
		Phases: []Phase{
			{Name: "a", Alive: true},
			{Name: "b", Alive: false, GCCycles: 2},
		},
	}
	for _, tt := range []struct {
		name    string
		res     Result
		verdict string
		errHas  string
	}{
		{"as expected", Result{Phases: []PhaseResult{{Name: "a", Alive: true}, {Name: "b", GCCycles: 2}}}, AsExpected, ""},
		{"alive when freed expected", Result{Phases: []PhaseResult{{Name: "a", Alive: true}, {Name: "b", Alive: true}}}, NotAsExpected, "b: payload alive, want freed"},
		{"freed when alive expected", Result{Phases: []PhaseResult{{Name: "a"}, {Name: "b", GCCycles: 2}}}, NotAsExpected, "a: payload freed, want alive"},
		{"wrong GC cycles", Result{Phases: []PhaseResult{{Name: "a", Alive: true}, {Name: "b", GCCycles: 1}}}, NotAsExpected, "b: released after 1 GC cycles, want 2"},
		{"too few phases", Result{Phases: []PhaseResult{{Name: "a", Alive: true}}}, Failed, "reached 1 phases, want 2"},
		{"wrong phase", Result{Phases: []PhaseResult{{Name: "a", Alive: true}, {Name: "c"}}}, Failed, `phase 2 is "c", want "b"`},
		{"child error", Result{Error: "child failed (exit status 2)"}, Failed, "exit status 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.res
			s.Judge(&r)
			if r.Verdict != tt.verdict {
				t.Errorf("verdict %q, want %q (error %q)", r.Verdict, tt.verdict, r.Error)
			}
			if !strings.Contains(r.Error, tt.errHas) {
				t.Errorf("error %q does not contain %q", r.Error, tt.errHas)
			}
			if tt.verdict == AsExpected && r.Error != "" {
				t.Errorf("error %q on an as-expected result", r.Error)
			}
			if r.Name != "x" {
				t.Errorf("name %q not filled in", r.Name)
			}
		})
	}
}

// TestCatalogue checks that every entry is complete and that the issue's
// list is all there.
func TestCatalogue(t *testing.T) {
	want := []string{
		"request-ctx-tasks", "empty-ctx-tasks", "ids-only-ctx", "without-cancel",
		"lost-cancel", "timeout-not-cancelled", "afterfunc-not-stopped", "timer-closure",
		"blocked-sender", "dead-ctx-leaked-goroutine", "global-cache", "sync-pool",
		"pprof-label-value", "http-server",
	}
	seen := map[string]bool{}
	for _, s := range All() {
		if seen[s.Name] {
			t.Errorf("duplicate scenario %q", s.Name)
		}
		seen[s.Name] = true
		checkEntry(t, s)
	}
	for _, n := range want {
		if _, ok := Lookup(n); !ok {
			t.Errorf("catalogue lacks %q", n)
		}
	}
	if got := len(Names()); got != len(All()) {
		t.Errorf("Names() has %d entries, All() %d", got, len(All()))
	}
}

func TestOptionsCheck(t *testing.T) {
	for _, tt := range []struct {
		o      Options
		errHas string
	}{
		{Options{PayloadBytes: 50 << 20, Tasks: 10}, ""},
		{Options{PayloadBytes: 40 << 10, Tasks: 10}, ""},
		{Options{PayloadBytes: 39 << 10, Tasks: 10}, "too small"},
		{Options{PayloadBytes: 1 << 20, Tasks: 0}, "tasks 0 out of range"},
		{Options{PayloadBytes: 1 << 30, Tasks: 1001}, "tasks 1001 out of range"},
	} {
		err := tt.o.Check()
		switch {
		case tt.errHas == "" && err != nil:
			t.Errorf("%+v: %v", tt.o, err)
		case tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)):
			t.Errorf("%+v: error %v, want one containing %q", tt.o, err, tt.errHas)
		}
	}
}

func TestTailOf(t *testing.T) {
	var long strings.Builder
	for i := range 40 {
		long.WriteString("line ")
		long.WriteString(strings.Repeat("x", i))
		long.WriteString("\n")
	}
	panicky := "starting\nwarming up\npanic: boom\n\ngoroutine 1 [running]:\n" + long.String()
	for _, tt := range []struct {
		name, in, prefix, suffix string
	}{
		{"empty", "", "", ""},
		{"short", "one\ntwo\n", "one\ntwo", "two"},
		{"long keeps the end", long.String(), "...\nline " + strings.Repeat("x", 28), strings.Repeat("x", 39)},
		{"panic keeps the panic line", panicky, "panic: boom\n", "\n..."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tailOf([]byte(tt.in))
			if !strings.HasPrefix(got, tt.prefix) || !strings.HasSuffix(got, tt.suffix) {
				t.Errorf("tailOf:\n%s\nwant prefix %q, suffix %q", got, tt.prefix, tt.suffix)
			}
			if n := strings.Count(got, "\n"); n > stderrLines+1 {
				t.Errorf("%d lines, want at most %d", n, stderrLines+1)
			}
			if len(got) > stderrTail+8 {
				t.Errorf("%d bytes, want at most about %d", len(got), stderrTail)
			}
		})
	}
}

// TestJudgeHolder checks that a holder found in a heap dump is held to the
// expectation, and that a phase without one (holders not looked for, or
// what a PhaseHook said) is not.
func TestJudgeHolder(t *testing.T) {
	s := &Scenario{
		Name: "x",
		Phases: []Phase{
			{Name: "a", Alive: true, Holder: holders(`global scenarios\.cache`), Via: `context\.valueCtx`},
			{Name: "b", Alive: false},
		},
	}
	detail := func(types ...string) []HolderDetail {
		d := HolderDetail{Payloads: 1}
		for _, ty := range types {
			d.Path = append(d.Path, PathStep{Type: ty})
		}
		return []HolderDetail{d}
	}
	for _, tt := range []struct {
		name    string
		got     PhaseResult
		verdict string
		errHas  string
	}{
		{"expected holder", PhaseResult{Holder: "global scenarios.cache", HolderDetail: detail("map", "context.valueCtx", "[]uint8")}, AsExpected, ""},
		{"not looked for", PhaseResult{}, AsExpected, ""},
		{"a hook's holder", PhaseResult{Holder: "hook saw a"}, AsExpected, ""},
		{"wrong holder", PhaseResult{Holder: "goroutine 5 frame scenarios.task (scenarios/catalogue.go:1)", HolderDetail: detail("context.valueCtx")}, NotAsExpected,
			`a: held by goroutine 5 frame scenarios.task (scenarios/catalogue.go:1), want a holder matching ^global scenarios\.cache$`},
		{"more holders", PhaseResult{Holder: "global scenarios.cache + goroutine 1 frame main.main (main.go:3)", HolderDetail: detail("context.valueCtx")}, NotAsExpected, "a: held by global"},
		{"wrong path", PhaseResult{Holder: "global scenarios.cache", HolderDetail: detail("map", "[]uint8")}, NotAsExpected,
			`a: held through map > []uint8, want a path matching context\.valueCtx`},
		{"holder unknown", PhaseResult{HolderError: "dump.heapdump: truncated"}, NotAsExpected, "a: holder unknown: dump.heapdump: truncated"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.got
			got.Name, got.Alive = "a", true
			r := Result{Phases: []PhaseResult{got, {Name: "b"}}}
			s.Judge(&r)
			if r.Verdict != tt.verdict || !strings.Contains(r.Error, tt.errHas) {
				t.Errorf("verdict %q, error %q; want %q with %q", r.Verdict, r.Error, tt.verdict, tt.errHas)
			}
			if ph := r.Phases[0]; ph.AsExpected != (tt.verdict == AsExpected) {
				t.Errorf("phase as expected %v", ph.AsExpected)
			}
		})
	}
}

// checkEntry checks that s is a complete entry, its phases named once
// each, that no freed phase expects a holder, and that its expected
// holders and paths are regular expressions that compile.
func checkEntry(t *testing.T, s *Scenario) {
	t.Helper()
	if s.Description == "" || s.Mechanism == "" || s.Expect == "" || s.Run == nil || len(s.Phases) == 0 {
		t.Errorf("%s: incomplete entry", s.Name)
	}
	phases := map[string]bool{}
	for _, p := range s.Phases {
		if p.Name == "" || phases[p.Name] {
			t.Errorf("%s: empty or duplicate phase %q", s.Name, p.Name)
		}
		phases[p.Name] = true
		if !p.Alive && (p.Holder != "" || p.Via != "") {
			t.Errorf("%s/%s: freed, but expects holder %q via %q", s.Name, p.Name, p.Holder, p.Via)
		}
		for _, re := range []string{p.Holder, p.Via, p.Leaked} {
			if _, err := regexp.Compile(re); err != nil {
				t.Errorf("%s/%s: %v", s.Name, p.Name, err)
			}
		}
	}
}

// TestCatalogueLeaked checks that every scenario says what the
// goroutineleak profile should report, and every phase checks it.
func TestCatalogueLeaked(t *testing.T) {
	for _, s := range All() {
		if s.ExpectLeakProfile == "" {
			t.Errorf("%s: no ExpectLeakProfile", s.Name)
		}
		for _, p := range s.Phases {
			if p.Leaked == "" {
				t.Errorf("%s/%s: no expected leak profile", s.Name, p.Name)
			}
		}
	}
}

// TestJudgeLeaked checks the leak profile's finding where it was taken,
// and only there.
func TestJudgeLeaked(t *testing.T) {
	s := &Scenario{Name: "x", Phases: []Phase{
		{Name: "a", Alive: false, Leaked: noneLeaked},
		{Name: "b", Alive: false, Leaked: leakedIn(1, "sender")},
	}}
	sender := "1 goroutine proven leaked in scenarios.sender (scenarios/catalogue.go:606)"
	for _, tt := range []struct {
		profile, a, b string
		want          string
	}{
		{LeakTaken, "none", sender, AsExpected},
		{LeakTaken, sender, sender, NotAsExpected},
		{LeakTaken, "none", "none", NotAsExpected},
		{LeakTaken, "none", "2 goroutines proven leaked in scenarios.sender (scenarios/catalogue.go:606)", NotAsExpected},
		{LeakSkipped, sender, "none", AsExpected},
		{LeakUnavailable, "", "", AsExpected},
	} {
		r := &Result{Phases: []PhaseResult{
			{Name: "a", LeakProfile: tt.profile, Leaked: tt.a},
			{Name: "b", LeakProfile: tt.profile, Leaked: tt.b},
		}}
		s.Judge(r)
		if r.Verdict != tt.want {
			t.Errorf("%s %q, %q: verdict %q (%s), want %q", tt.profile, tt.a, tt.b, r.Verdict, r.Error, tt.want)
		}
		if tt.want == NotAsExpected && !strings.Contains(r.Error, "leak profile: ") {
			t.Errorf("%s %q, %q: error %q does not name the leak profile", tt.profile, tt.a, tt.b, r.Error)
		}
	}
}

// TestCatalogueHolders checks that every phase where a payload is expected
// alive says which holder it expects (checkEntry checks the rest).
func TestCatalogueHolders(t *testing.T) {
	for _, s := range All() {
		for _, p := range s.Phases {
			if p.Alive && p.Holder == "" {
				t.Errorf("%s/%s: alive, but no expected holder", s.Name, p.Name)
			}
		}
	}
	// The helpers match what the Explainer writes, and a caller is not
	// its callee.
	for _, tt := range []struct {
		re, s string
		match bool
	}{
		{holders(frameOf("task")), "goroutine 12 frame scenarios.task (scenarios/catalogue.go:307)", true},
		{holders(frameOf("task")), "goroutine 12 frame scenarios.startTasks (scenarios/catalogue.go:307)", false},
		{holders(frameOf("lostCancelJob")), "goroutine 1 frame scenarios.lostCancel (scenarios/catalogue.go:372)", false},
		{holders(framesOf("task")), "10 x goroutine frame scenarios.task (scenarios/catalogue.go:307)", true},
		{holders(framesOf("task")), "goroutine 7 frame scenarios.task (scenarios/catalogue.go:307)", true},
		{holders(frameOf("tasksScenario.func1"), framesOf("task")),
			"goroutine 1 frame scenarios.tasksScenario.func1 (scenarios/catalogue.go:328) + 2 x goroutine frame scenarios.task (scenarios/catalogue.go:307)", true},
		{holders(frameOf("tasksScenario.func1"), framesOf("task")), "goroutine 1 frame scenarios.tasksScenario.func1 (scenarios/catalogue.go:328)", false},
		{holders(labelsOf), "10 x goroutine (pprof labels)", true},
		{holders(`timer scenarios\.timerClosure\.func1\.1, created at ` + fn("timerClosure.func1")),
			"timer scenarios.timerClosure.func1.1, created at scenarios.timerClosure.func1 (scenarios/catalogue.go:463)", true},
	} {
		if got := regexp.MustCompile(tt.re).MatchString(tt.s); got != tt.match {
			t.Errorf("%s matches %q: %v, want %v", tt.re, tt.s, got, tt.match)
		}
	}
}
