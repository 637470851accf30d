package scenarios_test

import (
	"context"
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
		start := time.Now()
		res := scenarios.TestRunner(2*time.Second).Run(context.Background(), scenariostest.Hang)
		if res.Verdict != scenarios.Failed || !strings.Contains(res.Error, "timed out after 2s") ||
			!strings.Contains(res.Error, "test-hang: hanging") {
			t.Errorf("verdict %q, error:\n%s", res.Verdict, res.Error)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("a 2s timeout took %v", d)
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
	res := scenarios.HoldersRunner(t, time.Minute).Run(context.Background(), scenariostest.WrongHolder)
	want := `request-returned: held by global scenariostest.kept, want a holder matching ^goroutine \d+ frame scenarios\.nowhere \([a-z]+\.go:\d+\)$`
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
// after the cancel. Each case cancels when the first result comes back;
// test-hang only ever ends when killed, so the cancel always finds it
// running.
func TestRunAllCancelled(t *testing.T) {
	for _, tt := range []struct {
		name  string
		list  []string
		want  []string // the results; a name alone where the verdict may be either
		error string   // in the error of the second result
	}{
		{"no child starts after the cancel", []string{"global-cache", "test-hang", "blocked-sender"},
			[]string{"global-cache as expected", "test-hang error"}, "child stopped: context canceled"},
		{"during the last child", []string{"global-cache", "test-hang"},
			[]string{"global-cache as expected", "test-hang error"}, "child stopped: context canceled"},
		// The second child may finish before the first result's holders
		// are named, or be stopped: RunAll says it was cancelled either way.
		{"before the last result", []string{"global-cache", "dead-ctx-leaked-goroutine"},
			[]string{"global-cache as expected", "dead-ctx-leaked-goroutine"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := scenarios.HoldersRunner(t, time.Minute)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []string
			var errs []string
			err := r.RunAll(ctx, lookup(t, tt.list...), func(res scenarios.Result) {
				got = append(got, res.Name+" "+res.Verdict)
				errs = append(errs, res.Error)
				cancel()
			})
			if err != context.Canceled {
				t.Errorf("RunAll returned %v, want context.Canceled", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("results %q, want %q", got, tt.want)
			}
			for i, w := range tt.want {
				if got[i] != w && !strings.HasPrefix(got[i], w+" ") {
					t.Errorf("result %d is %q, want %q", i+1, got[i], w)
				}
			}
			if !strings.Contains(errs[1], tt.error) {
				t.Errorf("second result's error %q lacks %q", errs[1], tt.error)
			}
		})
	}
}
