package retain_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/retain"
)

var verdictCount = flag.Int("retain.count", 0,
	"how many times TestVerdictIsStable serves each pattern (default 3, or 1000 with CTXLEAK_LONG set)")

// longTests reports whether the long stress tests run: the environment
// variable CTXLEAK_LONG is set (to anything), the one switch of the project.
func longTests() bool { return os.Getenv("CTXLEAK_LONG") != "" }

// verdictRuns is how many times TestVerdictIsStable serves each pattern:
// -retain.count if given; else 1000 with CTXLEAK_LONG set, the full check;
// else 3, enough for a verdict that flips often to show in ordinary runs.
func verdictRuns() int {
	switch {
	case *verdictCount > 0:
		return *verdictCount
	case longTests():
		return 1000
	default:
		return 3
	}
}

// TestVerdictIsStable serves every pattern verdictRuns times while a
// CPU-bound goroutine keeps another core busy: a released pattern must pass
// AssertReleased every time, a retained one must be found alive every time.
// Retained runs use Released with a short timeout, so that a thousand runs
// do not write a thousand dumps. With CTXLEAK_LONG set, full failures with
// dumps follow under the same load (TestPatterns checks one of each
// without it). -short skips the test.
func TestVerdictIsStable(t *testing.T) {
	if testing.Short() && *verdictCount == 0 && !longTests() {
		t.Skip("-short: TestPatterns serves each pattern once; set CTXLEAK_LONG=1 for the 1000-run check")
	}
	n := verdictRuns()
	stop := spin()
	defer stop()
	for _, p := range patterns {
		start := time.Now()
		wrong := 0
		for range n {
			if retainedOnce(t, p) != p.retained {
				wrong++
			}
		}
		verdict := "released"
		if p.retained {
			verdict = "retained"
		}
		t.Logf("%-55s %s %d/%d in %v", p.name, verdict, n-wrong, n, time.Since(start).Round(time.Millisecond))
		if wrong > 0 {
			t.Errorf("%s: %d of %d runs gave the wrong verdict", p.name, wrong, n)
		}
	}
	// Full failures under load, dump and holder analysis included, for
	// the retained patterns: three each in the long check.
	if !longTests() {
		t.Logf("full failures under load skipped: set CTXLEAK_LONG=1 to run them")
		return
	}
	const full = 3
	for _, p := range patterns {
		if !p.retained {
			continue
		}
		for range full {
			dir := t.TempDir()
			msg := check(t, p, retain.Timeout(20*time.Millisecond), retain.DumpDir(dir))
			checkDumps(t, dir, 1)
			for _, want := range p.holder {
				if !strings.Contains(msg, want) {
					t.Errorf("%s: failure lacks %q:\n%s", p.name, want, msg)
				}
			}
		}
	}
}

// retainedOnce serves p once and reports whether the body stayed alive.
func retainedOnce(t *testing.T, p pattern) bool {
	server, stopServer := startServer()
	defer stopServer()
	if p.retained {
		tr := retain.NewTracker(retain.Timeout(20 * time.Millisecond))
		release := serve(p, tr, server)
		defer release()
		alive, err := tr.Released(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(alive) > 0
	}
	tb := &recordingTB{name: t.Name()}
	tr := retain.New(tb, retain.NoDump())
	release := serve(p, tr, server)
	defer release()
	ok := tr.AssertReleased()
	if !ok {
		t.Logf("%s:\n%s", p.name, tb.text())
	}
	return !ok
}

// spin keeps a goroutine busy on the CPU until stop is called.
func spin() (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		x := 0
		for !done.Load() {
			x++
		}
		spinSink = x
	}()
	return func() {
		done.Store(true)
		wg.Wait()
	}
}

var spinSink int
