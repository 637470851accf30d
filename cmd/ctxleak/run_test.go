package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/scenarios"
)

// small keeps the children quick: a 1 MiB payload split over 2 tasks.
var small = []string{"--payload", "1MiB", "--tasks", "2"}

func runArgs(args ...string) []string {
	return append(append([]string{"run"}, args...), small...)
}

func TestRunUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		args     []string
		inStderr string
	}{
		{"bad size", []string{"run", "--payload", "12XB"}, `invalid argument "12XB" for "--payload"`},
		{"negative size", []string{"run", "--payload", "-5MiB"}, `"--payload"`},
		{"payload too small", []string{"run", "--payload", "1KiB"}, "invalid --payload 1KiB: want at least 40KiB (4KiB per task, --tasks 10)"},
		{"tasks zero", []string{"run", "--tasks", "0"}, "invalid --tasks 0: want 1 to 1000"},
		{"tasks not a number", []string{"run", "--tasks", "ten"}, `invalid argument "ten" for "--tasks"`},
		{"bad format", []string{"run", "--format", "xml"}, `invalid --format "xml": want text, json`},
		{"bad timeout", []string{"run", "--timeout", "0s"}, "invalid --timeout 0s"},
		{"unknown scenario", []string{"run", "request-ctx-tasks", "no-such-thing"},
			`unknown scenario "no-such-thing"; valid names: afterfunc-not-stopped, blocked-sender,`},
		{"keep is a file", []string{"run", "--keep", "run_test.go", "global-cache"}, "--keep: "},
		{"payload over memory", []string{"run", "--payload", "100TiB"}, "invalid --payload 100TiB: this machine can hold at most "},
	} {
		if _, ok := scenarios.MaxPayloadBytes(); !ok && tt.name == "payload over memory" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ctxleak(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.inStderr)
			}
			if stdout != "" {
				t.Errorf("stdout not empty:\n%s", stdout)
			}
		})
	}
}

func TestRunList(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := ctxleak(t, "run", "--list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range scenarios.All() {
		if !strings.Contains(stdout, s.Name) {
			t.Errorf("--list lacks %s", s.Name)
		}
	}
	// What the leak profile cannot see is said once.
	if strings.Count(stdout, scenarios.LeakProfileLimit) != 1 {
		t.Errorf("--list does not state the leak profile's limit once:\n%s", stdout)
	}

	// Listing runs nothing, so sync-pool is safe here even under -race,
	// where sync.Pool drops Puts at random and its verdict may differ.
	code, stdout, stderr = ctxleak(t, "run", "--list", "--format", "json", "sync-pool")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var l scenarios.Listing
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatal(err)
	}
	want := scenarios.Listing{Schema: "ctxleak.run-list/v1", Scenarios: []scenarios.ListedScenario{{
		Name:              "sync-pool",
		Description:       l.Scenarios[0].Description,
		Mechanism:         l.Scenarios[0].Mechanism,
		Expect:            "freed after two GC cycles once the request returns",
		ExpectLeakProfile: l.Scenarios[0].ExpectLeakProfile,
		Phases: []scenarios.ListedPhase{
			{Name: "request-running", ExpectAlive: true,
				ExpectHolder: `^goroutine \d+ frame scenarios\.syncPool\.func1 \(scenarios/[a-z]+\.go:\d+\)$`,
				ExpectLeaked: "^none$"},
			{Name: "request-returned", ExpectAlive: false, ExpectGCCycles: 2, ExpectLeaked: "^none$"},
		},
	}}}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("--list --format json:\n%+v\nwant\n%+v", l, want)
	}
}

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not a JSON object", v)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// hasKeys reports a missing key of those the issue names.
func hasKeys(t *testing.T, what string, v any, want ...string) {
	t.Helper()
	keys := keysOf(t, v)
	for _, w := range want {
		i := sort.SearchStrings(keys, w)
		if i == len(keys) || keys[i] != w {
			t.Errorf("%s lacks %q; has %v", what, w, keys)
		}
	}
}

// TestRunJSON checks the JSON document against the schema in the issue:
// {"scenarios":[{"name","description","expect","verdict","error",
// "phases":[{"name","alive","heap_delta_bytes","rss_delta_bytes","release_gc_count"}]}]}
// (the gc_cycles, renamed by the one naming rule of docs/json-run.md)
// and the figures against the expectation.
func TestRunJSON(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := ctxleak(t, runArgs("--format", "json", "request-ctx-tasks", "empty-ctx-tasks")...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if stderr != "" {
		t.Errorf("stderr not empty: %s", stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
	}
	hasKeys(t, "document", doc, "schema", "scenarios")
	if doc["schema"] != "ctxleak.run/v1" {
		t.Errorf("schema %v, want ctxleak.run/v1", doc["schema"])
	}
	list := doc["scenarios"].([]any)
	if len(list) != 2 {
		t.Fatalf("%d scenarios, want 2", len(list))
	}
	for _, s := range list {
		hasKeys(t, "scenario", s, "name", "description", "expect", "verdict", "error", "phases")
		for _, p := range s.(map[string]any)["phases"].([]any) {
			hasKeys(t, "phase", p, "name", "alive", "heap_delta_bytes", "rss_delta_bytes", "release_gc_count", "leak_profile", "leaked_goroutines")
			if p.(map[string]any)["alive"] != true {
				continue
			}
			hasKeys(t, "alive phase", p, "holder", "holder_detail", "expect_holder")
			for _, d := range p.(map[string]any)["holder_detail"].([]any) {
				hasKeys(t, "holder detail", d, "holder", "payload_count", "roots", "path", "retained_bytes")
				for _, r := range d.(map[string]any)["roots"].([]any) {
					hasKeys(t, "holder root", r, "root_count", "kind", "goroutine_ids", "position", "created_by")
				}
			}
		}
	}
	hasKeys(t, "document", doc, "holders")

	var rep scenarios.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	type phase struct {
		name     string
		alive    bool
		gcCycles int
		holder   string
	}
	want := map[string][]phase{
		"request-ctx-tasks": {
			{"request-running", true, 0, "goroutine 1 frame scenarios.tasksScenario.func1 (scenarios/catalogue.go:N) + 2 x goroutine frame scenarios.task (scenarios/catalogue.go:N)"},
			{"request-returned", true, 0, "2 x goroutine frame scenarios.task (scenarios/catalogue.go:N)"},
			{"tasks-done", false, 1, ""},
		},
		"empty-ctx-tasks": {
			{"request-running", true, 0, "goroutine 1 frame scenarios.tasksScenario.func1 (scenarios/catalogue.go:N)"},
			{"request-returned", false, 1, ""},
			{"tasks-done", false, 0, ""},
		},
	}
	line := regexp.MustCompile(`\.go:\d+\)`)
	for _, r := range rep.Scenarios {
		if r.Verdict != scenarios.AsExpected || r.Error != "" {
			t.Errorf("%s: verdict %q, error %q", r.Name, r.Verdict, r.Error)
		}
		var got []phase
		for _, p := range r.Phases {
			got = append(got, phase{p.Name, p.Alive, p.GCCycles, line.ReplaceAllString(p.Holder, ".go:N)")})
			if p.Alive && (p.HeapDeltaBytes < 1<<20 || p.SiteBytes != 1<<20) {
				t.Errorf("%s/%s: alive with heap delta %d, %d at the site", r.Name, p.Name, p.HeapDeltaBytes, p.SiteBytes)
			}
		}
		if !reflect.DeepEqual(got, want[r.Name]) {
			t.Errorf("%s: phases %v, want %v", r.Name, got, want[r.Name])
		}
	}
	if rep.PayloadBytes != 1<<20 || rep.Tasks != 2 || !rep.Holders {
		t.Errorf("payload %d, tasks %d, holders %v", rep.PayloadBytes, rep.Tasks, rep.Holders)
	}
}

// ctxleakIn runs ctxleak args in a process of its own (this test binary,
// as testscript installed it) with TMPDIR set to tmp, and returns its exit
// status and output.
func ctxleakIn(t *testing.T, tmp string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command("ctxleak", args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestRunHoldersOff: --holders=false writes no dump and names no holder;
// the verdicts and the exit status are those of the payload alone.
func TestRunHoldersOff(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	code, stdout, stderr := ctxleakIn(t, tmp, runArgs("--format", "json", "--holders=false", "global-cache")...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var rep scenarios.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Holders || rep.Scenarios[0].Verdict != scenarios.AsExpected {
		t.Errorf("holders %v, verdict %q", rep.Holders, rep.Scenarios[0].Verdict)
	}
	for _, p := range rep.Scenarios[0].Phases {
		if p.Holder != "" || len(p.HolderDetail) != 0 || p.Dump != "" || p.ExpectHolder != "" {
			t.Errorf("%s: holder %q, dump %q, expected holder %q", p.Name, p.Holder, p.Dump, p.ExpectHolder)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("%d entries in TMPDIR, want none", len(left))
	}
	code, stdout, _ = ctxleak(t, runArgs("--holders=false", "global-cache")...)
	if code != 0 || strings.Contains(stdout, "held by") {
		t.Errorf("exit %d, text report:\n%s", code, stdout)
	}
}

func TestHoldersWanted(t *testing.T) {
	for _, tt := range []struct {
		holders, set bool
		payload      bytesize.Size
		on, skipped  bool
	}{
		{true, false, 50 << 20, true, false},
		{true, false, 256 << 20, true, false},
		{true, false, 1 << 30, false, true}, // too large unless asked for
		{true, true, 1 << 30, true, false},  // --holders
		{false, true, 50 << 20, false, false},
		{false, true, 1 << 30, false, false},
	} {
		f := runFlags{holders: tt.holders, holdersSet: tt.set, payload: tt.payload}
		if on, skipped := f.holdersWanted(); on != tt.on || skipped != tt.skipped {
			t.Errorf("%+v: on %v, skipped %v; want %v, %v", tt, on, skipped, tt.on, tt.skipped)
		}
	}
}

// TestRunDumpsRemoved: the heap dumps go to a fresh directory under
// TMPDIR, which is gone when the run is over.
func TestRunDumpsRemoved(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	code, stdout, stderr := ctxleakIn(t, tmp, runArgs("--format", "json", "global-cache", "blocked-sender")...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var rep scenarios.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var named int
	for _, r := range rep.Scenarios {
		for _, p := range r.Phases {
			if p.Holder != "" {
				named++
			}
			if p.Dump != "" {
				t.Errorf("%s/%s: dump %s reported", r.Name, p.Name, p.Dump)
			}
		}
	}
	if named != 4 {
		t.Errorf("%d holders named, want 4", named)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("%d entries left in TMPDIR, want none", len(left))
	}
}

// TestRunWrongHolder: a payload alive as expected but held by another
// holder than the catalogue says is not as expected: exit status 1, and
// the report names the holder and the expectation.
func TestRunWrongHolder(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := ctxleak(t, runArgs("test-wrong-holder", "global-cache")...)
	if code != exitFindings {
		t.Errorf("exit %d, want 1", code)
	}
	for _, s := range []string{
		"test-wrong-holder  NOT as expected",
		"| request-returned | alive (unexpected holder) |",
		"  request-returned  global scenariostest.kept",
		`verdict:   NOT as expected: request-returned: held by global scenariostest.kept, want a holder matching ^goroutine \d+ frame scenarios\.nowhere`,
		"global-cache  as expected",
		"1 of 2 scenarios as expected",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	if stderr != "ctxleak: 1 of 2 scenarios not as expected: test-wrong-holder\n" {
		t.Errorf("stderr %q", stderr)
	}
}

// TestRunChildFailures: a child that crashes and one that hangs are those
// scenarios' errors; the scenarios around them still run and are reported.
func TestRunChildFailures(t *testing.T) {
	t.Parallel()
	// A hanging child and its timeout are in the run_failures script and
	// scenarios' TestRunnerFailures: this run has none, so no test waits
	// out a timeout twice.
	code, stdout, stderr := ctxleak(t, runArgs("--format", "json", "--timeout", "1m",
		"test-crash", "global-cache", "dead-ctx-leaked-goroutine")...)
	if code != exitFindings {
		t.Errorf("exit %d, want 1", code)
	}
	wantErr := "ctxleak: 1 of 3 scenarios not as expected: test-crash\n"
	if !strings.HasSuffix(stderr, wantErr) {
		t.Errorf("stderr %q does not end with %q", stderr, wantErr)
	}
	var rep scenarios.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	got := map[string]scenarios.Result{}
	for _, r := range rep.Scenarios {
		got[r.Name] = r
	}
	// A child that failed has no phases: an empty list, not null.
	var doc struct {
		Scenarios []struct {
			Name   string
			Phases json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Scenarios {
		if s.Name == "test-crash" && string(s.Phases) != "[]" {
			t.Errorf("test-crash: phases %s, want []", s.Phases)
		}
	}
	if len(got) != 3 {
		t.Fatalf("%d results, want 3", len(got))
	}
	for name, errHas := range map[string][]string{
		"test-crash": {"child failed (exit status 2)", "panic: test-crash: deliberate crash"},
	} {
		r := got[name]
		if r.Verdict != scenarios.Failed {
			t.Errorf("%s: verdict %q", name, r.Verdict)
		}
		for _, s := range errHas {
			if !strings.Contains(r.Error, s) {
				t.Errorf("%s: error %q lacks %q", name, r.Error, s)
			}
		}
	}
	for _, name := range []string{"global-cache", "dead-ctx-leaked-goroutine"} {
		if r := got[name]; r.Verdict != scenarios.AsExpected || len(r.Phases) == 0 {
			t.Errorf("%s: verdict %q, %d phases: %s", name, r.Verdict, len(r.Phases), r.Error)
		}
	}
}

// TestRunNotAsExpected: the text report says so, and the one-line reason is
// printed last, with exit status 1.
func TestRunNotAsExpected(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := ctxleak(t, runArgs("test-unexpected")...)
	if code != exitFindings {
		t.Errorf("exit %d, want 1", code)
	}
	for _, s := range []string{
		"test-unexpected  NOT as expected",
		"alive (want freed)",
		"verdict:   NOT as expected: request-returned: payload alive, want freed",
		"0 of 1 scenario as expected",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	if stderr != "ctxleak: 1 of 1 scenario not as expected: test-unexpected\n" {
		t.Errorf("stderr %q", stderr)
	}
}

// Tests that run scenarios avoid sync-pool: under the race detector
// sync.Pool drops a quarter of its Puts on purpose, so the release may take
// one GC cycle instead of two. bench/run-catalogue.sh checks it.

// TestRunKeep: profiles and heap dumps are kept, 0600, in a fresh directory
// per run, with the executable that wrote the dumps; a user's existing
// files are left alone.
func TestRunKeep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mine := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	var runs []string
	for range 2 {
		code, stdout, stderr := ctxleak(t, runArgs("--keep", dir, "--format", "json", "dead-ctx-leaked-goroutine")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var rep scenarios.Report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, rep.KeepDir)
		if filepath.Dir(rep.KeepDir) != dir {
			t.Errorf("profiles in %s, not under %s", rep.KeepDir, dir)
		}
		var kept []string
		for _, p := range rep.Scenarios[0].Phases {
			kept = append(kept, filepath.Base(p.Profile))
			if p.Dump != "" {
				kept = append(kept, filepath.Base(p.Dump))
			}
			if p.LeakProfileFile != "" {
				kept = append(kept, filepath.Base(p.LeakProfileFile))
			}
		}
		want := []string{"01-request-running.pb.gz", "01-request-running.heapdump", "02-request-returned.pb.gz"}
		if scenarios.LeakProfileAvailable() {
			// Go 1.27: the goroutineleak profile of each phase too.
			want = []string{"01-request-running.pb.gz", "01-request-running.heapdump", "01-request-running.goroutineleak.pb.gz",
				"02-request-returned.pb.gz", "02-request-returned.goroutineleak.pb.gz"}
		}
		if !reflect.DeepEqual(kept, want) {
			t.Errorf("phase profiles and dumps %v, want %v", kept, want)
		}
		// The kept dump is read with the kept executable as the run read it.
		dump := rep.Scenarios[0].Phases[0].Dump
		code, stdout, stderr = ctxleak(t, "holders", dump, "--binary", filepath.Join(rep.KeepDir, "executable"))
		if code != exitFindings || !strings.Contains(stdout, "frame github.com/ctxleak/ctxleak/scenarios.deadCtxLeakedGoroutine.func1") {
			t.Errorf("ctxleak holders %s: exit %d, stderr %s\n%s", dump, code, stderr, stdout)
		}
	}
	if runs[0] == runs[1] {
		t.Errorf("both runs kept their profiles in %s", runs[0])
	}
	var files int
	err := filepath.WalkDir(runs[0], func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.Name() == "executable" {
			want = 0o700
		}
		if perm := info.Mode().Perm(); perm != want {
			t.Errorf("%s has mode %v, want %v", path, perm, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The baseline's and two phases' profiles, a dump, the executable, and
	// on Go 1.27 two goroutineleak profiles.
	want := 5
	if scenarios.LeakProfileAvailable() {
		want = 7
	}
	if files != want {
		t.Errorf("%d files kept, want %d", files, want)
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "mine" {
		t.Errorf("the user's file changed: %q, %v", b, err)
	}
}

func TestFreshRunDir(t *testing.T) {
	dir := t.TempDir()
	now := mustTime(t, "2026-01-02T03:04:05Z")
	var got []string
	for range 3 {
		d, err := freshRunDir(filepath.Join(dir, "new"), now)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(d))
	}
	want := []string{"run-20260102-030405", "run-20260102-030405-2", "run-20260102-030405-3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestRunInterrupted: an interrupt kills the running child and removes the
// heap dumps already written; the run exits 130, as for any SIGINT.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	cmd := exec.Command("ctxleak", runArgs("test-hang", "--timeout", "5m")...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The hanging child writes a dump at its first phase: wait for it.
	deadline := time.Now().Add(time.Minute)
	for wait := time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		dumps, _ := filepath.Glob(filepath.Join(tmp, "ctxleak-run-*", "test-hang", "*.heapdump"))
		if len(dumps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill() // the hanging child exits once orphaned
			cmd.Wait()
			files, _ := filepath.Glob(filepath.Join(tmp, "*", "*"))
			t.Fatalf("no heap dump written in a minute (%v); stderr:\n%s", files, stderr.String())
		}
		time.Sleep(wait)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want status 130", err)
	}
	if !strings.HasSuffix(stderr.String(), "ctxleak: interrupted\n") {
		t.Errorf("stderr %q", stderr.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("%d entries left in TMPDIR, want none", len(left))
	}
}

// TestReleaseLacksTestScenarios: the ctxleak binary does not link the
// scenarios that crash, hang or misbehave on purpose; only this test
// binary knows them.
func TestReleaseLacksTestScenarios(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the ctxleak binary's packages")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/ctxleak/ctxleak/cmd/ctxleak").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/ctxleak/ctxleak/scenarios") {
		t.Fatalf("go list -deps lacks the scenarios package:\n%s", out)
	}
	if slices.Contains(deps, "github.com/ctxleak/ctxleak/scenarios/scenariostest") {
		t.Errorf("the ctxleak binary links package scenariostest")
	}
	if _, ok := scenarios.Lookup("test-crash"); !ok {
		t.Errorf("test-crash unknown to the test binary")
	}
}

// runVarying matches what differs between runs of "ctxleak run --format
// json": the measured figures, durations, addresses, goroutine ids, the Go
// version, where the sources are, and the leak profile (Go 1.27+ only).
var runVarying = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`("(?:heap_delta_bytes|rss_delta_bytes|peak_rss_bytes|per_payload_heap_bytes|retained_bytes|settle_gc_count|wall_ms|elapsed_ms|dump_ms|holder_ms|line)": )-?\d+`), "${1}0"},
	{regexp.MustCompile(`"0x[0-9a-f]+"`), `"0xADDR"`},
	{regexp.MustCompile(`("goroutine_ids": \[)[\s\d,]+\]`), "${1}0]"},
	{regexp.MustCompile(`("payload_addrs": \[)[\s"0-9a-fxADR,]+\]`), `${1}"0xADDR"]`},
	{regexp.MustCompile(`("go_version": )"[^"]*"`), `${1}"GOVERSION"`},
	{regexp.MustCompile(`("file": )"[^"]*/([^/"]+/[^/"]+)"`), `${1}"${2}"`},
	{regexp.MustCompile(`\.go:\d+\)`), ".go:N)"},
	// The leak profile is taken on Go 1.27 and later only.
	{regexp.MustCompile(`("leak_profile": )"[^"]*"`), `${1}"LEAK_PROFILE"`},
	{regexp.MustCompile(`\n\s*"(?:expect_leaked|leaked)": "[^"]*",`), ""},
}

// TestRunGolden pins the JSON schemas of "ctxleak run" and of "ctxleak run
// --list" in testdata/run, each golden file named after the flags that
// make it (go test -update rewrites them). The run is real; what varies
// between runs is normalised (runVarying).
func TestRunGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"format-json.payload-1MiB.tasks-2.global-cache.golden",
			[]string{"run", "--format", "json", "--payload", "1MiB", "--tasks", "2", "global-cache"}},
		{"list.format-json.golden", []string{"run", "--list", "--format", "json"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			code, stdout, stderr := ctxleak(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			for _, v := range runVarying {
				stdout = v.re.ReplaceAllString(stdout, v.with)
			}
			path := filepath.Join("testdata", "run", tt.golden)
			if *update {
				if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update creates it)", err)
			}
			if stdout != string(want) {
				t.Errorf("differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, stdout, want)
			}
		})
	}
}
