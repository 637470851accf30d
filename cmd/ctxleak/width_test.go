package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// checkWidth fails for each line of out wider than width.
func checkWidth(t *testing.T, what, out string, width int) {
	t.Helper()
	wide := 0
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > width {
			wide++
			if wide <= 5 {
				t.Errorf("%s: line of %d columns: %q", what, n, line)
			}
		}
	}
	if wide > 5 {
		t.Errorf("%s: %d lines wider than %d in all", what, wide, width)
	}
}

// With COLUMNS=80, "ctxleak run" (its tables, holders and paths, its
// prose) prints no line wider than 80 columns, nor does --list.
func TestRunFitsWidth(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	t.Setenv("NO_COLOR", "1")
	// http-server has the widest table (a column per request) and
	// holder lines longer than 80 columns.
	_, stdout, stderr := ctxleak(t, runArgs("--holders", "http-server")...)
	if !strings.Contains(stdout, "held by:") {
		t.Fatalf("no holders in the output:\n%s\nstderr:\n%s", stdout, stderr)
	}
	checkWidth(t, "run", stdout, 80)
	_, stdout, _ = ctxleak(t, "run", "--list")
	checkWidth(t, "run --list", stdout, 80)
}

// With COLUMNS=80, the tables of "ctxleak analyze" fit in 80 columns:
// the widest column (sites, functions) is shortened from the left.
func TestAnalyzeFitsWidth(t *testing.T) {
	dir := t.TempDir()
	fixtures(t, dir)
	t.Chdir(dir)
	t.Setenv("NO_COLOR", "1")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	args := []string{"analyze", "heap.pb.gz", "goroutine.pb.gz", "--base", "base.pb.gz", "--requests", "40",
		"--fail-on-growth", "1MiB", "--fail-on-goroutines", "0", "--top", "5", "--show-labels", "--full-stack"}
	_, wide, _ := ctxleak(t, args...)
	t.Setenv("COLUMNS", "80")
	_, stdout, _ := ctxleak(t, args...)
	checkWidth(t, "analyze", stdout, 80)
	if !strings.Contains(stdout, "...") || !strings.Contains(stdout, "(shop/upload.go:69)") {
		t.Errorf("the sites are not shortened from the left, keeping their tail:\n%s", stdout)
	}
	if stdout == wide {
		t.Errorf("COLUMNS=80 changed nothing:\n%s", stdout)
	}
}
