package main

import (
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/scenarios"
)

// TestInstalled builds ctxleak as README.md installs it, go install
// ./cmd/ctxleak (DWARF kept), and stripped as go run and go test build it
// (-ldflags='-s -w'), and runs the whole catalogue from each binary: every
// scenario as expected, exit 0. The tests of the package run from a test
// binary, which carries no DWARF, so only this test sees what an installed
// ctxleak reports (issue 38: it named the timer runtime.timeTimer, against
// the catalogue's expectation). It takes about a minute: set
// CTXLEAK_INSTALLED=1 (or CTXLEAK_LONG) to run it.
func TestInstalled(t *testing.T) {
	if os.Getenv("CTXLEAK_INSTALLED") == "" && os.Getenv("CTXLEAK_LONG") == "" {
		t.Skip("set CTXLEAK_INSTALLED=1 to install ctxleak and run its catalogue from the installed binary")
	}
	if testing.Short() {
		t.Skip("-short: installs ctxleak and runs the whole catalogue")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		flags []string
		dwarf bool
	}{
		{"installed", nil, true},
		{"stripped", []string{"-ldflags=-s -w"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exe := goInstall(t, repo, tt.flags)
			if got := hasDWARF(t, exe); got != tt.dwarf {
				t.Fatalf("%s: DWARF %v, want %v", exe, got, tt.dwarf)
			}
			cmd := exec.Command(exe, "run")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s run: %v\n%s", exe, err, out)
			}
			m := allAsExpected.FindSubmatch(out)
			want := strconv.Itoa(len(scenarios.All()))
			if m == nil || string(m[1]) != want || string(m[2]) != want {
				t.Fatalf("%s run: want %s of %s scenarios as expected:\n%s", exe, want, want, out)
			}
		})
	}
}

// goInstall runs go install flags ./cmd/ctxleak in repo with GOBIN a new
// directory, as README.md says, and returns the installed executable. It
// must be built by the Go release running the test (GOTOOLCHAIN included).
func goInstall(t *testing.T, repo string, flags []string) string {
	t.Helper()
	gobin := t.TempDir()
	args := append(append([]string{"install"}, flags...), "./cmd/ctxleak")
	cmd := exec.Command("go", args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	exe := filepath.Join(gobin, "ctxleak")
	info, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if info.GoVersion != runtime.Version() {
		t.Fatalf("go install built %s with %s, the test runs %s", exe, info.GoVersion, runtime.Version())
	}
	return exe
}

// hasDWARF reports whether the executable at path has DWARF sections.
func hasDWARF(t *testing.T, path string) bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
}
