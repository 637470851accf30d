package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/testexit"
)

// childEnv, when set in the environment of the test binary, makes it run
// the scenario it names (with the payload and tasks in childPayloadEnv and
// childTasksEnv) and print the Result as JSON, as "ctxleak __scenario" does.
const (
	childEnv        = "SCENARIOS_TEST_CHILD"
	childPayloadEnv = "SCENARIOS_TEST_PAYLOAD"
	childTasksEnv   = "SCENARIOS_TEST_TASKS"
	childHookEnv    = "SCENARIOS_TEST_HOOK"
	childDumpsEnv   = "SCENARIOS_TEST_DUMPS"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(child(name))
	}
	testexit.Exit(m.Run())
}

// retryScenarios exist only in this test binary: they stand for timer
// scenarios whose timer fires before the measurements finish.
var retryScenarios = map[string]*Scenario{
	"retry-twice": {
		Name:   "retry-twice",
		Phases: []Phase{{Name: "request-running", Alive: true}, {Name: "request-returned", Alive: false}},
		Run: func(env *Env) error {
			p := env.Payload()
			env.Phase("request-running")
			sink.Add(uint32(p[0]))
			env.Phase("request-returned")
			if want := time.Second << env.attempt; env.timerDelay() != want {
				return fmt.Errorf("attempt %d: timer delay %v, want %v", env.attempt, env.timerDelay(), want)
			}
			if env.attempt < 2 {
				return errTooSlow
			}
			return nil
		},
	},
	"always-too-slow": {
		Name:   "always-too-slow",
		Phases: []Phase{{Name: "request-running", Alive: true}},
		Run: func(env *Env) error {
			p := env.Payload()
			env.Phase("request-running")
			sink.Add(uint32(p[0]))
			return errTooSlow
		},
	},
}

// leakThenAlive exists only in this test binary: a goroutine leaks before
// its first phase, and its payload, expected freed, stays alive at both.
// The leak profile is taken at the first phase (no later dump is
// expected), after which the runtime would die writing the second
// phase's dump: the child must refuse it and go on.
var leakThenAlive = &Scenario{
	Name:   "leak-then-alive",
	Phases: []Phase{{Name: "leaked", Alive: false}, {Name: "still-alive", Alive: false}},
	Run: func(env *Env) error {
		p := env.Payload()
		never := make(chan struct{})
		go func() { <-never }()
		env.Phase("leaked")
		env.Phase("still-alive")
		sink.Add(uint32(p[0]))
		return nil
	},
}

func child(name string) int {
	s, ok := Lookup(name)
	if r, found := retryScenarios[name]; found {
		s, ok = r, true
	}
	if name == leakThenAlive.Name {
		s, ok = leakThenAlive, true
	}
	if !ok {
		fmt.Fprintf(os.Stderr, "no scenario %q\n", name)
		return 2
	}
	payload, _ := strconv.ParseInt(os.Getenv(childPayloadEnv), 10, 64)
	tasks, _ := strconv.Atoi(os.Getenv(childTasksEnv))
	opts := Options{PayloadBytes: payload, Tasks: tasks, DumpDir: os.Getenv(childDumpsEnv)}
	if os.Getenv(childHookEnv) == "1" {
		opts.PhaseHook = func(phase string, alive bool) string {
			return fmt.Sprintf("hook saw %s, alive=%v", phase, alive)
		}
	}
	res, err := Run(s, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testRunner runs scenarios in children made of the test binary itself.
func testRunner(timeout time.Duration) *Runner {
	return &Runner{
		Command: func(ctx context.Context, name string, o Options) *exec.Cmd {
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(),
				childEnv+"="+name,
				childPayloadEnv+"="+strconv.FormatInt(o.PayloadBytes, 10),
				childTasksEnv+"="+strconv.Itoa(o.Tasks),
				childDumpsEnv+"="+o.DumpDir,
				"GORACE="+childGORACE())
			return cmd
		},
		Options: Options{PayloadBytes: 1 << 20, Tasks: 4},
		Timeout: timeout,
	}
}

// childGORACE is the GORACE of the children: a binary built with -race
// sleeps a second before it exits (atexit_sleep_ms=1000), which would
// double the time of most children.
func childGORACE() string {
	v := os.Getenv("GORACE")
	if strings.Contains(v, "atexit_sleep_ms=0") {
		return v
	}
	return strings.TrimSpace(v + " atexit_sleep_ms=0")
}

// testBinary is this test binary, opened once for every Explainer: its
// types are read from DWARF on first use.
var testBinary = sync.OnceValues(func() (*binsym.Binary, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return binsym.Open(exe)
})

// testExplainer reads the heap dumps of children made of this test binary.
func testExplainer(t *testing.T) *Explainer {
	t.Helper()
	bin, err := testBinary()
	if err != nil {
		t.Fatal(err)
	}
	return &Explainer{Binary: bin}
}

// holdersRunner is a testRunner whose children write heap dumps into a
// temporary directory and whose holders are named.
func holdersRunner(t *testing.T, timeout time.Duration) *Runner {
	r := testRunner(timeout)
	r.Holders = testExplainer(t)
	r.Options.DumpDir = t.TempDir()
	return r
}

// TestCatalogueInChildren runs every catalogue entry in a child process and
// requires its expectation to be met, the holders included, with figures
// that agree with it.
func TestCatalogueInChildren(t *testing.T) {
	t.Parallel()
	r := holdersRunner(t, 2*time.Minute)
	t.Cleanup(func() {
		// Each scenario's dumps are removed once read.
		if left, _ := os.ReadDir(r.Options.DumpDir); len(left) > 0 {
			t.Errorf("%d entries left in the dump directory, want none", len(left))
		}
	})
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			if s.Name == "sync-pool" && raceEnabled {
				t.Skip("under the race detector sync.Pool drops a quarter of its Puts, so the release may take one GC cycle")
			}
			t.Parallel()
			res := r.Run(context.Background(), s)
			if res.Verdict != AsExpected {
				t.Fatalf("verdict %q: %s", res.Verdict, res.Error)
			}
			payload := r.Options.PayloadBytes
			if res.PayloadBytes != payload {
				t.Errorf("payload %d bytes, want %d", res.PayloadBytes, payload)
			}
			for _, p := range res.Phases {
				// An alive payload's holder is named and checked; a freed
				// one has none.
				switch {
				case p.Alive && (p.Holder == "" || p.HolderDetail == nil || p.ExpectHolder == ""):
					t.Errorf("%s: alive, holder %q (expected %q), detail %v, error %q",
						p.Name, p.Holder, p.ExpectHolder, p.HolderDetail, p.HolderError)
				case !p.Alive && (p.Holder != "" || p.HolderDetail != nil):
					t.Errorf("%s: freed, but held by %q", p.Name, p.Holder)
				case p.Dump != "":
					t.Errorf("%s: dump %s not removed", p.Name, p.Dump)
				}
				if p.Alive {
					t.Logf("%s: held by %s", p.Name, p.Holder)
				}
				// A live payload shows in full at its allocation site and
				// in the heap; a freed one shows in neither.
				if p.Alive && p.AlivePayloads == res.Payloads {
					if p.SiteBytes != payload {
						t.Errorf("%s: %d bytes at the alloc site, want %d", p.Name, p.SiteBytes, payload)
					}
					if p.HeapDeltaBytes < payload {
						t.Errorf("%s: heap delta %d < payload %d", p.Name, p.HeapDeltaBytes, payload)
					}
				}
				if !p.Alive {
					if p.SiteBytes != 0 {
						t.Errorf("%s: freed, but %d bytes at the alloc site", p.Name, p.SiteBytes)
					}
					if p.HeapDeltaBytes > payload/2 {
						t.Errorf("%s: freed, but heap delta %d", p.Name, p.HeapDeltaBytes)
					}
				}
			}
			if res.PeakRSSBytes < payload {
				t.Errorf("peak RSS %d below the payload", res.PeakRSSBytes)
			}
			checkLeakProfile(t, s, res)
			if want, ok := grouping[s.Name]; ok {
				checkGrouping(t, r, res, want)
			}
		})
	}
}

// checkLeakProfile checks where the goroutineleak profile was taken: on
// a Go without it nowhere; else after the last phase that writes a heap
// dump, and at every phase after it, its finding checked (by Judge).
func checkLeakProfile(t *testing.T, s *Scenario, res Result) {
	t.Helper()
	last := -1 // the last phase expected to write a heap dump
	for i, p := range s.Phases {
		if p.Alive {
			last = i
		}
	}
	for i, p := range res.Phases {
		want := LeakUnavailable
		if LeakProfileAvailable() {
			want = LeakSkipped
			if i >= last {
				want = LeakTaken
			}
		}
		if p.LeakProfile != want {
			t.Errorf("%s: leak profile %q, want %q", p.Name, p.LeakProfile, want)
		}
		if p.LeakProfile == LeakTaken && (p.Leaked == "" || p.ExpectLeaked == "") {
			t.Errorf("%s: leak profile taken, found %q, checked against %q", p.Name, p.Leaked, p.ExpectLeaked)
		}
		if p.LeakProfile == LeakTaken && (p.Leaked == "none") != (len(p.LeakedGoroutines) == 0) {
			t.Errorf("%s: leak profile found %q, but %d groups", p.Name, p.Leaked, len(p.LeakedGoroutines))
		}
	}
}

// TestPhaseHook checks that what the hook returns at each boundary becomes
// that phase's holder.
func TestPhaseHook(t *testing.T) {
	t.Parallel()
	s, _ := Lookup("global-cache")
	r := testRunner(time.Minute)
	command := r.Command
	r.Command = func(ctx context.Context, name string, o Options) *exec.Cmd {
		cmd := command(ctx, name, o)
		cmd.Env = append(cmd.Env, childHookEnv+"=1")
		return cmd
	}
	res := r.Run(context.Background(), s)
	if res.Verdict != AsExpected {
		t.Fatalf("verdict %q: %s", res.Verdict, res.Error)
	}
	var got []string
	for _, p := range res.Phases {
		got = append(got, p.Holder)
	}
	want := []string{
		"hook saw request-running, alive=true",
		"hook saw request-returned, alive=true",
		"hook saw entry-deleted, alive=false",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("holders %q, want %q", got, want)
	}
}

// TestDumpAfterLeakProfile runs leakThenAlive with heap dumps on Go 1.27:
// the second phase's dump is refused, as its holder error says, where the
// runtime would have killed the child.
func TestDumpAfterLeakProfile(t *testing.T) {
	if !LeakProfileAvailable() {
		t.Skipf("needs Go 1.27's goroutineleak profile; %s has none", runtime.Version())
	}
	t.Parallel()
	res := holdersRunner(t, time.Minute).Run(context.Background(), leakThenAlive)
	if res.Verdict != NotAsExpected || len(res.Phases) != 2 {
		t.Fatalf("verdict %q (%s), %d phases; want not as expected, 2 phases", res.Verdict, res.Error, len(res.Phases))
	}
	first, second := res.Phases[0], res.Phases[1]
	if first.LeakProfile != LeakTaken || !strings.Contains(first.Leaked, "1 goroutine proven leaked") || first.HolderError != "" {
		t.Errorf("first phase: leak profile %q found %q, holder error %q; want taken, 1 leaked, the dump read",
			first.LeakProfile, first.Leaked, first.HolderError)
	}
	if !second.Alive || !strings.Contains(second.HolderError, "refused to write a heap dump") {
		t.Errorf("second phase: alive %v, holder error %q; want alive, the dump refused", second.Alive, second.HolderError)
	}
}

// TestRetryWhenTooSlow checks that a scenario whose timer fired before the
// measurements finished is started again with twice the delay, that only
// the last attempt's phases are kept, and that the runner gives up after
// maxAttempts.
func TestRetryWhenTooSlow(t *testing.T) {
	t.Parallel()
	r := testRunner(time.Minute)
	res := r.Run(context.Background(), retryScenarios["retry-twice"])
	if res.Verdict != AsExpected || res.Attempts != 3 || len(res.Phases) != 2 || res.Payloads != 1 {
		t.Errorf("verdict %q (%s), %d attempts, %d phases, %d payloads; want as expected, 3, 2, 1",
			res.Verdict, res.Error, res.Attempts, len(res.Phases), res.Payloads)
	}
	res = r.Run(context.Background(), retryScenarios["always-too-slow"])
	want := "the timer fired before the measurements finished, 4 times, the last with a 8s timer: the machine is too busy"
	if res.Verdict != Failed || !strings.Contains(res.Error, want) {
		t.Errorf("verdict %q, error %q; want one containing %q", res.Verdict, res.Error, want)
	}
}
