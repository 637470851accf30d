package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/scenarios"
)

// TestRunLeakProfile runs the scenarios whose goroutines Go 1.27's
// goroutineleak profile proves leaked, and global-cache, whose janitor it
// cannot see. On a Go without the profile the run says so once and shows
// no leak profile; on Go 1.27 each scenario shows what the profile found
// at each phase, with the profile taken only from the last phase that
// writes a heap dump, or at every phase without dumps.
func TestRunLeakProfile(t *testing.T) {
	t.Parallel()
	names := []string{"blocked-sender", "dead-ctx-leaked-goroutine", "global-cache"}
	code, stdout, stderr := ctxleak(t, runArgs(names...)...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if !scenarios.LeakProfileAvailable() {
		if !strings.Contains(stdout, "leak profile: n/a (Go 1.27+): go") || strings.Contains(stdout, "proven leaked") {
			t.Errorf("without the goroutineleak profile: want the n/a line and no finding, got:\n%s", stdout)
		}
		return
	}
	for _, want := range []string{
		`(?m)^  request-running   not taken: a later phase writes a heap dump`,
		`(?m)^  request-returned  1 goroutine proven leaked in scenarios\.sender \(scenarios/catalogue\.go:\d+\)$`,
		`(?m)^  request-running   1 goroutine proven leaked in scenarios\.leaky \(scenarios/catalogue\.go:\d+\)$`,
		`(?m)^  entry-deleted     none$`,
		`(?m)^leak profile: ` + regexp.QuoteMeta(scenarios.LeakProfileLimit) + `$`,
	} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("no match for %s in:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "n/a (Go 1.27+)") {
		t.Errorf("Go 1.27 run says the profile is not available:\n%s", stdout)
	}

	// Without heap dumps nothing forbids the profile: it is taken at
	// every phase, and finds no leak while the sender waits on the gate.
	code, stdout, stderr = ctxleak(t, runArgs("--holders=false", "blocked-sender")...)
	if code != 0 {
		t.Fatalf("--holders=false: exit %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if !regexp.MustCompile(`(?m)^  request-running   none\n  request-returned  1 goroutine proven leaked in scenarios\.sender `).MatchString(stdout) {
		t.Errorf("--holders=false: want the profile at both phases, got:\n%s", stdout)
	}
}
