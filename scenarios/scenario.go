// Package scenarios is ctxleak's catalogue of ways to hand a request context
// (or what it carries) to background work, and the runner that measures,
// phase by phase, whether a large payload stored in that context stays alive.
//
// A Scenario is a sequence of named phases. The child side ([Run]) executes
// one scenario in the current process: it allocates the tracked payload,
// and at each phase boundary runs the GC until the state settles, then
// records whether the payload is still alive (a weak.Pointer), the heap in
// use and the RSS above a baseline taken before the payload existed, the GC
// cycles the release took, and the bytes a pprof heap profile still shows
// at the payload's allocation site. The parent side ([Runner]) runs each
// scenario in a child process of its own, so that one scenario's garbage
// never shows in another's figures, and a crash or a hang costs only that
// scenario.
//
// With Options.DumpDir set, the child also writes a heap dump at each phase
// where a payload is alive, and an [Explainer] in the parent reads it once
// the child has exited and names what holds the payload: a goroutine's
// frame, a global, a timer, a goroutine's pprof labels, with the typed path
// from there ([Runner.RunAll] does this for one scenario while the next
// one's child runs). [TempDumpDir] makes a directory for dumps that are not
// kept, in memory when the system has room there. [Scenario.Judge]
// compares a Result with the expectation written down in the catalogue, the
// holders included.
//
// A [Report] of judged results renders itself: [Result.WriteText] and
// [Report.WriteSummaryText] print what "ctxleak run" shows, and
// [Report.WriteJSON] the "ctxleak.run/v1" document (docs/json-run.md);
// [Listing] does the same for the catalogue without running it.
//
// [Lookup] finds scenarios by name: those of the catalogue ([All]), and
// those added with [Register]. Tests register scenarios that crash, hang or
// misbehave on purpose by importing package scenariostest; the ctxleak
// binary does not contain them.
package scenarios

import (
	"fmt"
	"regexp"
	"strings"
)

// Scenario is one entry of the catalogue.
type Scenario struct {
	// Name identifies the scenario on the command line, e.g. "request-ctx-tasks".
	Name string
	// Description says in one sentence what the scenario does.
	Description string
	// Mechanism explains in one line why the payload is (or is not) kept alive.
	Mechanism string
	// Expect summarises the expected outcome, e.g. "alive while the tasks
	// run, freed when they finish".
	Expect string
	// ExpectLeakProfile says in a few words what Go 1.27's goroutineleak
	// profile is expected to report (Phase.Leaked checks it), e.g.
	// "none proven leaked".
	ExpectLeakProfile string
	// Phases lists the phase boundaries Run reaches, in order, each with its
	// expected outcome.
	Phases []Phase
	// Globals are package-level variables outside this package that Run
	// may keep a payload in, for naming them in heap dumps when the
	// executable has no symbol table (GlobalAt makes one).
	Globals []Global
	// Run drives the scenario: it allocates payloads with Env.Payload and
	// calls Env.Phase at each boundary listed in Phases, in order.
	Run func(env *Env) error
}

// Phase is a phase boundary of a scenario and its expected outcome.
type Phase struct {
	// Name names the boundary, e.g. "tasks-running".
	Name string
	// Alive is whether a payload is expected to be alive at this boundary
	// once the GC has settled.
	Alive bool
	// GCCycles, when not zero, is the exact number of GC cycles the release
	// at this boundary is expected to take (sync.Pool needs 2).
	GCCycles int
	// Holder, for a phase where the payload is alive, is a regular
	// expression the holder named from the phase's heap dump
	// (PhaseResult.Holder) must match, e.g. `^global scenarios\.cache$`.
	Holder string
	// Via, if set, is a regular expression the types along the path from
	// the holder to the payload (HolderDetail.TypesText) must match.
	Via string
	// Leaked is a regular expression what Go 1.27's goroutineleak profile
	// reports at this boundary (PhaseResult.Leaked: "none", or "1
	// goroutine proven leaked in scenarios.sender (...)") must match,
	// where the profile is taken; "" checks nothing. On a Go without the
	// profile it is not checked.
	Leaked string
}

// Verdicts of a Result.
const (
	AsExpected    = "as expected"
	NotAsExpected = "not as expected"
	Failed        = "error" // the scenario did not complete; see Result.Error
)

// Report is the document "ctxleak run --format json" prints (WriteJSON;
// docs/json-run.md describes every key). Sizes are in bytes and end in
// _bytes, durations in milliseconds and end in _ms, counts end in _count,
// addresses are hexadecimal strings; lists are always there.
type Report struct {
	// Schema is ReportSchema; WriteJSON sets it.
	Schema    string   `json:"schema"`
	Scenarios []Result `json:"scenarios"`
	// PayloadBytes is the payload size every scenario used (--payload).
	PayloadBytes int64 `json:"payload_bytes"`
	// Tasks is the number of background tasks or requests (--tasks).
	Tasks int `json:"task_count"`
	// GoVersion is the Go version the children ran under.
	GoVersion string `json:"go_version"`
	// KeepDir is where the heap profiles were kept (--keep), if anywhere.
	KeepDir string `json:"keep_dir,omitempty"`
	// Holders reports whether the holders of alive payloads were looked
	// for in heap dumps (PhaseResult.Holder).
	Holders bool `json:"holders"`
}

// Result is the outcome of one scenario.
type Result struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Expect      string `json:"expect"`
	// Verdict is AsExpected, NotAsExpected or Failed; set by Scenario.Judge.
	Verdict string `json:"verdict"`
	// Error says why the scenario did not complete (a crash with the tail
	// of the child's stderr, a timeout) or, with NotAsExpected, which
	// phases differed from the expectation. Empty when as expected.
	Error  string        `json:"error"`
	Phases []PhaseResult `json:"phases"`

	// Mechanism is the one-line explanation from the catalogue.
	Mechanism string `json:"mechanism"`
	// PayloadBytes is the size of the tracked payload (the sum of all
	// payloads when there are several, as in http-server).
	PayloadBytes int64 `json:"payload_bytes"`
	// Payloads is how many payloads were tracked (1, or one per request).
	Payloads int `json:"payload_count"`
	// PeakRSSBytes is the child's peak resident set size: its own VmHWM,
	// read at the end of the run; for a child that did not report it, the
	// kernel's figure at exit (rusage), which on Linux also counts the RSS
	// of the parent at the time it started the child.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// Attempts is how many times the child started the scenario: more than
	// 1 when a timer fired before the measurements finished on a busy
	// machine and the scenario was run again with a longer delay.
	Attempts int `json:"attempt_count"`
	// WallMillis is how long the child took, start to exit, as the parent saw it.
	WallMillis int64 `json:"wall_ms"`
	// ProfileDir is where this scenario's heap profiles were kept, if anywhere.
	ProfileDir string `json:"profile_dir,omitempty"`
	// Globals are the scenarios' package-level variables, at their
	// addresses in the child, for naming them in its heap dumps.
	Globals []Global `json:"globals"`
}

// PhaseResult is what was measured at one phase boundary.
type PhaseResult struct {
	Name string `json:"name"`
	// Alive reports whether any tracked payload was still reachable after
	// the GC settled.
	Alive bool `json:"alive"`
	// HeapDeltaBytes is the heap in use by objects (runtime/metrics
	// /memory/classes/heap/objects:bytes) after the GC, minus the baseline
	// taken before the payload existed.
	HeapDeltaBytes int64 `json:"heap_delta_bytes"`
	// RSSDeltaBytes is the resident set size minus the baseline, read after
	// returning freed memory to the OS (debug.FreeOSMemory), so that freed
	// payloads stop counting.
	RSSDeltaBytes int64 `json:"rss_delta_bytes"`
	// GCCycles is how many GC cycles the release took when the payload was
	// released at this boundary (it was alive at the previous one); 0 when
	// nothing was released here: still alive, or already freed earlier.
	GCCycles int `json:"release_gc_count"`

	// ExpectAlive is the expected value of Alive.
	ExpectAlive bool `json:"expect_alive"`
	// ExpectHolder and ExpectVia are the regular expressions the holder
	// and the path to the payload must match, when they were checked.
	ExpectHolder string `json:"expect_holder,omitempty"`
	ExpectVia    string `json:"expect_via,omitempty"`
	// AsExpected reports whether this phase met its expectation.
	AsExpected bool `json:"as_expected"`
	// AlivePayloads counts the tracked payloads still alive.
	AlivePayloads int `json:"alive_payload_count"`
	// SettleGCCycles is how many GC cycles ran at this boundary before the
	// state settled (the release was seen, or the cap was reached).
	SettleGCCycles int `json:"settle_gc_count"`
	// SiteBytes is what the heap profile shows in use at the payload's
	// allocation site (inuse_space of samples whose stack holds it).
	SiteBytes int64 `json:"site_bytes"`
	// ElapsedMillis is the time since the scenario started.
	ElapsedMillis int64 `json:"elapsed_ms"`
	// PerPayloadHeapBytes is HeapDeltaBytes divided by the number of
	// payloads, when there is more than one (bytes retained per request).
	PerPayloadHeapBytes *int64 `json:"per_payload_heap_bytes,omitempty"`
	// Holder names what keeps the payload alive, in a few words: the
	// holder found in the phase's heap dump (see Explain), or what a
	// PhaseHook returned.
	Holder string `json:"holder,omitempty"`
	// HolderDetail describes the holders found in the heap dump, one
	// entry per way the alive payloads are held.
	HolderDetail []HolderDetail `json:"holder_detail"`
	// HolderError says why the holder could not be found.
	HolderError string `json:"holder_error,omitempty"`
	// Profile is the path of the heap profile kept for this phase.
	Profile string `json:"profile,omitempty"`
	// Dump is the path of the heap dump written at this phase, when a
	// payload was alive and Options.DumpDir was set; PayloadAddrs are the
	// addresses of the alive payloads in it.
	Dump         string `json:"dump,omitempty"`
	PayloadAddrs []Addr `json:"payload_addrs"`
	// DumpMillis is how long the child took to write the heap dump, and
	// HolderMillis how long reading it and naming the holders took.
	DumpMillis   int64 `json:"dump_ms,omitempty"`
	HolderMillis int64 `json:"holder_ms,omitempty"`
	// LeakProfile says whether Go 1.27's goroutineleak profile was taken
	// at this boundary, after its heap dump: LeakTaken, LeakSkipped or
	// LeakUnavailable.
	LeakProfile string `json:"leak_profile"`
	// ExpectLeaked is the regular expression Leaked must match, when it
	// was checked.
	ExpectLeaked string `json:"expect_leaked,omitempty"`
	// Leaked is what the profile reported, in a few words: "none", or
	// how many goroutines it proved leaked and where they are blocked.
	// LeakedGoroutines are those goroutines, grouped by where.
	Leaked           string        `json:"leaked,omitempty"`
	LeakedGoroutines []LeakedGroup `json:"leaked_goroutines"`
	// LeakProfileFile is the path of the goroutineleak profile kept for
	// this phase (Options.KeepDir), if any.
	LeakProfileFile string `json:"leak_profile_file,omitempty"`
}

// Judge compares r with the expectation of s and sets r.Verdict, each
// phase's ExpectAlive and AsExpected, and, when a phase differs, r.Error.
// A result that already carries an error is Failed.
func (s *Scenario) Judge(r *Result) {
	r.Name = s.Name
	r.Description = s.Description
	r.Expect = s.Expect
	r.Mechanism = s.Mechanism
	if r.Error != "" {
		r.Verdict = Failed
		return
	}
	if len(r.Phases) != len(s.Phases) {
		r.Verdict = Failed
		r.Error = fmt.Sprintf("reached %d phases, want %d", len(r.Phases), len(s.Phases))
		return
	}
	var diffs []string
	for i := range r.Phases {
		got, want := &r.Phases[i], s.Phases[i]
		if got.Name != want.Name {
			r.Verdict = Failed
			r.Error = fmt.Sprintf("phase %d is %q, want %q", i+1, got.Name, want.Name)
			return
		}
		got.ExpectAlive = want.Alive
		got.AsExpected = got.Alive == want.Alive
		if got.AsExpected && want.GCCycles != 0 && got.GCCycles != want.GCCycles {
			got.AsExpected = false
			diffs = append(diffs, fmt.Sprintf("%s: released after %d GC cycles, want %d",
				got.Name, got.GCCycles, want.GCCycles))
			continue
		}
		if !got.AsExpected {
			diffs = append(diffs, fmt.Sprintf("%s: payload %s, want %s",
				got.Name, aliveWord(got.Alive), aliveWord(want.Alive)))
			continue
		}
		if diff := judgeHolder(got, want); diff != "" {
			got.AsExpected = false
			diffs = append(diffs, got.Name+": "+diff)
		}
		if diff := judgeLeaked(got, want); diff != "" {
			got.AsExpected = false
			diffs = append(diffs, got.Name+": "+diff)
		}
	}
	if len(diffs) > 0 {
		r.Verdict = NotAsExpected
		r.Error = strings.Join(diffs, "; ")
		return
	}
	r.Verdict = AsExpected
}

// judgeHolder checks the holder found in the heap dump of an alive phase
// (the phase has a HolderDetail or a HolderError) against the expectation,
// and says how it differs.
func judgeHolder(got *PhaseResult, want Phase) string {
	if !got.Alive || (got.HolderDetail == nil && got.HolderError == "") || (want.Holder == "" && want.Via == "") {
		return ""
	}
	got.ExpectHolder, got.ExpectVia = want.Holder, want.Via
	if got.HolderError != "" {
		return "holder unknown: " + got.HolderError
	}
	if want.Holder != "" {
		re, err := regexp.Compile(want.Holder)
		if err != nil {
			return fmt.Sprintf("bad expected holder %q: %v", want.Holder, err)
		}
		if !re.MatchString(got.Holder) {
			return fmt.Sprintf("held by %s, want a holder matching %s", got.Holder, want.Holder)
		}
	}
	if want.Via != "" {
		re, err := regexp.Compile(want.Via)
		if err != nil {
			return fmt.Sprintf("bad expected path %q: %v", want.Via, err)
		}
		for _, d := range got.HolderDetail {
			if p := d.TypesText(); !re.MatchString(p) {
				return fmt.Sprintf("held through %s, want a path matching %s", p, want.Via)
			}
		}
	}
	return ""
}

// judgeLeaked checks what the goroutineleak profile reported at a phase
// where it was taken against the expectation, and says how it differs.
func judgeLeaked(got *PhaseResult, want Phase) string {
	if got.LeakProfile != LeakTaken || want.Leaked == "" {
		return ""
	}
	got.ExpectLeaked = want.Leaked
	re, err := regexp.Compile(want.Leaked)
	if err != nil {
		return fmt.Sprintf("bad expected leak profile %q: %v", want.Leaked, err)
	}
	if !re.MatchString(got.Leaked) {
		return fmt.Sprintf("leak profile: %s, want %s", got.Leaked, want.Leaked)
	}
	return ""
}

func aliveWord(alive bool) string {
	if alive {
		return "alive"
	}
	return "freed"
}

// Options configure a run of the catalogue.
type Options struct {
	// PayloadBytes is the size of the payload each scenario stores in its
	// context. Scenarios with several payloads (one per request) split it.
	PayloadBytes int64
	// Tasks is the number of background tasks, or of requests in http-server.
	Tasks int
	// KeepDir, if set, is an existing directory where the child writes one
	// pprof heap profile per phase (and one for the baseline), mode 0600.
	// Files that exist are never overwritten.
	KeepDir string
	// DumpDir, if set, is an existing directory where the child writes a
	// heap dump (runtime/debug.WriteHeapDump) at each phase where a payload
	// is alive, mode 0600, never overwriting a file; Explain names the
	// payloads' holders from them.
	DumpDir string
	// PhaseHook, if set, is called at each phase boundary after the
	// measurement, with the phase name and whether a payload is alive; what
	// it returns is stored as the phase's Holder. It runs in the child.
	PhaseHook func(phase string, alive bool) (holder string)
	// MaxGCCycles caps the GC cycles run at one boundary while a payload
	// stays alive; 0 means DefaultMaxGCCycles.
	MaxGCCycles int
}

// Defaults for Options.
const (
	DefaultPayloadBytes = 50 << 20
	DefaultTasks        = 10
	DefaultMaxGCCycles  = 4
	// MinPayloadBytes is the smallest payload (per request, where the
	// payload is split) the runner accepts: smaller objects may share a
	// size-class span and their release is harder to see in the figures.
	MinPayloadBytes = 4 << 10
)

// Check validates o and reports a problem naming the offending option.
func (o Options) Check() error {
	switch {
	case o.Tasks < 1 || o.Tasks > 1000:
		return fmt.Errorf("tasks %d out of range: want 1 to 1000", o.Tasks)
	case o.PayloadBytes < MinPayloadBytes*int64(o.Tasks):
		return fmt.Errorf("payload %d bytes is too small: want at least %d bytes (%d bytes per task) for %d tasks",
			o.PayloadBytes, MinPayloadBytes*int64(o.Tasks), MinPayloadBytes, o.Tasks)
	}
	return nil
}

func (o Options) maxGCCycles() int {
	if o.MaxGCCycles > 0 {
		return o.MaxGCCycles
	}
	return DefaultMaxGCCycles
}
