package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// versionsDir holds one directory of heap dump fixtures per supported Go
// release (go1.22 ... go1.27), written by testdata/fixture built with that
// release; testdata/regen.sh rebuilds them, testdata/README.md says how.
const versionsDir = "../../testdata"

// versionsGolden names the golden report after the flags that make it.
const versionsGolden = "holders-min-size-128KiB.golden"

// TestGoVersions runs "ctxleak holders" on the dump each supported Go
// release wrote and compares the report with the golden file next to it.
// Every report must name the three holders the fixture program sets up: a
// blocked goroutine's frame, a global and a timer. -update rewrites the
// goldens from the stored dumps (after the same checks). Every go1.*
// directory is tested, those of Go 1.22 to 1.27 at least. The stored
// binaries carry DWARF; each report is checked against the one from a copy
// without it too (withoutDWARF): the same names, or less known.
func TestGoVersions(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(versionsDir, "go1.*"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, dir := range dirs {
		have[filepath.Base(dir)] = true
	}
	for _, v := range []string{"go1.22", "go1.23", "go1.24", "go1.25", "go1.26", "go1.27"} {
		if !have[v] {
			t.Errorf("fixtures %q: no %s", dirs, v)
		}
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			testGoVersion(t, dir)
		})
	}
}

func testGoVersion(t *testing.T, dir string) {
	version, err := os.ReadFile(filepath.Join(dir, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	dump := dumptest.Gunzip(t, filepath.Join(dir, "dump.gz"), filepath.Join(work, "dump"))
	exe := dumptest.Gunzip(t, filepath.Join(dir, "binary.gz"), filepath.Join(work, "binary"))

	code, stdout, stderr := ctxleak(t, "holders", dump, "--binary", exe, "--min-size", "128KiB")
	if code != 1 {
		t.Errorf("exit %d, want 1 (retention found); stderr %q", code, stderr)
	}
	if !strings.HasPrefix(stderr, "ctxleak: retention found: 3 groups of 128.0 KiB or more") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q, want one line saying 3 groups were found", stderr)
	}
	got := strings.ReplaceAll(stdout, work, "$WORK")

	// The checks that make the golden meaningful: a regenerated golden
	// must still name every holder.
	for _, s := range []string{
		"heap dump $WORK/dump (" + strings.TrimSpace(string(version)) + ")\n",
		"3 groups of 128.0 KiB or more",
		"], frame main.waitThenUse (ctxleakfixture/main.go:",
		"held by global main.cache (",
		"held by a timer that will run main.scheduleRetry.func1 (ctxleakfixture/main.go:",
		"|- " + heap.TimerType + " ",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("report lacks %q:\n%s", s, got)
		}
	}
	if n := strings.Count(got, "allocated at main.newUpload (ctxleakfixture/main.go:"); n != 3 {
		t.Errorf("%d payloads allocated at main.newUpload, want 3:\n%s", n, got)
	}
	stripped := withoutDWARF(t, exe, filepath.Join(work, "binary-nodwarf"))
	sameNamesWithoutDWARF(t, dump, exe, stripped, "--min-size", "128KiB")

	golden := filepath.Join(dir, versionsGolden)
	if *update {
		if !t.Failed() {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoVersions -update)", err)
	}
	if got != string(b) {
		t.Errorf("report differs from %s (go test -run TestGoVersions -update rewrites it):\ngot:\n%s\nwant:\n%s", golden, got, b)
	}
}
