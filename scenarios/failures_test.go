package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/scenarios"
	"github.com/ctxleak/ctxleak/scenarios/scenariostest"
)

// TestTestScenarios: the test scenarios are complete entries that Lookup
// finds by name once registered, and that the catalogue does not list.
func TestTestScenarios(t *testing.T) {
	for _, s := range scenariostest.All() {
		scenarios.CheckEntry(t, s)
		if got, ok := scenarios.Lookup(s.Name); !ok || got != s {
			t.Errorf("Lookup(%q) = %v, %v; want the registered scenario", s.Name, got, ok)
		}
		if slices.Contains(scenarios.Names(), s.Name) || slices.Contains(scenarios.All(), s) {
			t.Errorf("%s is listed with the catalogue", s.Name)
		}
	}
}

// TestRunnerFailures checks that a crash, a hang and a bad payload size
// come back as the scenario's error.
func TestRunnerFailures(t *testing.T) {
	t.Parallel()
	t.Run("crash", func(t *testing.T) {
		t.Parallel()
		res := scenarios.TestRunner(time.Minute).Run(context.Background(), scenariostest.Crash)
		if res.Verdict != scenarios.Failed || !strings.Contains(res.Error, "exit status 2") ||
			!strings.Contains(res.Error, "panic: test-crash: deliberate crash") {
			t.Errorf("verdict %q, error:\n%s", res.Verdict, res.Error)
		}
	})
	t.Run("hang", func(t *testing.T) {
		t.Parallel()
		// The child prints "hanging" after its first phase; on a loaded
		// machine that can take longer than the timeout, so the timeout
		// doubles until the child got there (2s when the machine is idle).
		for timeout := 2 * time.Second; ; timeout *= 2 {
			res := scenarios.TestRunner(timeout).Run(context.Background(), scenariostest.Hang)
			if res.Verdict != scenarios.Failed || !strings.Contains(res.Error, fmt.Sprintf("timed out after %v", timeout)) {
				t.Fatalf("verdict %q, error:\n%s", res.Verdict, res.Error)
			}
			if strings.Contains(res.Error, "test-hang: hanging") {
				break
			}
			if timeout >= 32*time.Second {
				t.Fatalf("the child never printed its stderr before a %v timeout; error:\n%s", timeout, res.Error)
			}
		}
	})
	t.Run("unexpected", func(t *testing.T) {
		t.Parallel()
		res := scenarios.TestRunner(time.Minute).Run(context.Background(), scenariostest.Unexpected)
		if res.Verdict != scenarios.NotAsExpected || res.Error != "request-returned: payload alive, want freed" {
			t.Errorf("verdict %q, error %q", res.Verdict, res.Error)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		t.Parallel()
		r := scenarios.TestRunner(time.Minute)
		r.Options.PayloadBytes = 100
		res := r.Run(context.Background(), scenariostest.Unexpected)
		if res.Verdict != scenarios.Failed || !strings.Contains(res.Error, "too small") {
			t.Errorf("verdict %q, error %q", res.Verdict, res.Error)
		}
	})
}

// TestWrongHolder: a payload alive as expected but held by another holder
// than the expected one is not as expected, and the error names both.
func TestWrongHolder(t *testing.T) {
	t.Parallel()
	res := scenarios.HoldersRunner(t, time.Minute).Run(context.Background(), scenariostest.WrongHolder)
	want := `request-returned: held by global scenariostest.kept, want a holder matching ^goroutine \d+ frame scenarios\.nowhere \(scenarios/[a-z]+\.go:\d+\)$`
	if res.Verdict != scenarios.NotAsExpected || res.Error != want {
		t.Errorf("verdict %q, error %q; want %q", res.Verdict, res.Error, want)
	}
	if p := res.Phases[0]; p.AsExpected || !p.Alive || p.ExpectHolder == "" {
		t.Errorf("phase %+v", p)
	}
}

// lookup returns the named scenarios.
func lookup(t *testing.T, names ...string) []*scenarios.Scenario {
	t.Helper()
	var list []*scenarios.Scenario
	for _, name := range names {
		s, ok := scenarios.Lookup(name)
		if !ok {
			t.Fatalf("no scenario %q", name)
		}
		list = append(list, s)
	}
	return list
}

// TestRunAll: results come back in order, judged, with their holders.
func TestRunAll(t *testing.T) {
	t.Parallel()
	r := scenarios.HoldersRunner(t, time.Minute)
	list := lookup(t, "global-cache", "dead-ctx-leaked-goroutine", "blocked-sender")
	var got []string
	err := r.RunAll(context.Background(), list, func(res scenarios.Result) {
		got = append(got, res.Name+" "+res.Verdict)
		if res.Phases[0].Holder == "" {
			t.Errorf("%s: no holder at %s", res.Name, res.Phases[0].Name)
		}
	})
	want := []string{"global-cache as expected", "dead-ctx-leaked-goroutine as expected", "blocked-sender as expected"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("RunAll: %v, results %q; want %q", err, got, want)
	}
}

// TestRunAllCancelled: a run cancelled before its last result went to done
// returns context.Canceled, whether the cancel stopped a child, the last
// one included, or came once the last child had exited; no child starts
// after the cancel.
func TestRunAllCancelled(t *testing.T) {
	t.Parallel()
	// Cancelled as the child of its second scenario is made: that child is
	// stopped before it starts, whatever the timing.
	for _, tt := range []struct {
		name string
		list []string
	}{
		{"no child starts after the cancel", []string{"global-cache", "dead-ctx-leaked-goroutine", "blocked-sender"}},
		{"during the last child", []string{"global-cache", "dead-ctx-leaked-goroutine"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := scenarios.TestRunner(time.Minute)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			command := r.Command
			r.Command = func(ctx context.Context, name string, o scenarios.Options) *exec.Cmd {
				if name == tt.list[1] {
					cancel()
				}
				return command(ctx, name, o)
			}
			var got, errs []string
			err := r.RunAll(ctx, lookup(t, tt.list...), func(res scenarios.Result) {
				got = append(got, res.Name+" "+res.Verdict)
				errs = append(errs, res.Error)
			})
			want := []string{"global-cache as expected", tt.list[1] + " error"}
			if err != context.Canceled || !slices.Equal(got, want) {
				t.Fatalf("RunAll: %v, results %q; want context.Canceled after %q", err, got, want)
			}
			if !strings.HasPrefix(errs[1], "child stopped: context canceled") {
				t.Errorf("second result's error %q, want the child stopped", errs[1])
			}
		})
	}
	// Cancelled when the first result comes back: the second child may not
	// have started yet, may run, or may have exited already; RunAll says it
	// was cancelled in every case.
	t.Run("before the last result", func(t *testing.T) {
		t.Parallel()
		r := scenarios.TestRunner(time.Minute)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var got []string
		err := r.RunAll(ctx, lookup(t, "global-cache", "dead-ctx-leaked-goroutine"), func(res scenarios.Result) {
			got = append(got, res.Name+" "+res.Verdict)
			cancel()
		})
		if err != context.Canceled {
			t.Errorf("RunAll returned %v, want context.Canceled", err)
		}
		if len(got) == 0 || len(got) > 2 || got[0] != "global-cache as expected" ||
			len(got) == 2 && !strings.HasPrefix(got[1], "dead-ctx-leaked-goroutine ") {
			t.Errorf("results %q, want global-cache as expected, then dead-ctx-leaked-goroutine or nothing", got)
		}
	})
}

// TestVerdictsSteady runs the catalogue five times, one child after
// another as "ctxleak run" does, and requires every verdict as expected
// every time: a verdict that flips between runs is a bug. It takes about
// a minute, so it runs only with CTXLEAK_LONG=1.
func TestVerdictsSteady(t *testing.T) {
	if os.Getenv("CTXLEAK_LONG") == "" {
		t.Skip("a stress test: set CTXLEAK_LONG=1 to run it")
	}
	var list []*scenarios.Scenario
	for _, s := range scenarios.All() {
		// Under the race detector sync.Pool drops a quarter of its Puts.
		if s.Name != "sync-pool" || !scenarios.RaceEnabled {
			list = append(list, s)
		}
	}
	r := scenarios.HoldersRunner(t, 2*time.Minute)
	for i := range 5 {
		err := r.RunAll(context.Background(), list, func(res scenarios.Result) {
			if res.Verdict != scenarios.AsExpected {
				t.Errorf("run %d: %s: verdict %q: %s", i+1, res.Name, res.Verdict, res.Error)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
