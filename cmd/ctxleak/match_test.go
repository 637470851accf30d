package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/internal/testbuild"
)

// "ctxleak holders" accepts only the executable that wrote the dump: a
// rebuild of the same source without optimizations exits 2 naming the
// first difference (heap's TestMatchWrongBinary tries more builds).
func TestHoldersWrongBinary(t *testing.T) {
	dir := t.TempDir()
	exes := map[string][]string{
		"match":       {"../../heap/testdata/match"},
		"match-noopt": {"-gcflags=all=-N", "../../heap/testdata/match"},
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(exes))
	for name, args := range exes {
		wg.Go(func() {
			if out, err := testbuild.Build(filepath.Join(dir, name), nil, args...); err != nil {
				errs <- fmt.Errorf("%v\n%s", err, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	dump := filepath.Join(dir, "match.dump")
	if out, err := exec.Command(filepath.Join(dir, "match"), dump).CombinedOutput(); err != nil {
		t.Fatalf("match: %v\n%s", err, out)
	}
	if code, _, stderr := ctxleak(t, "holders", dump, "--binary", filepath.Join(dir, "match")); code == 2 {
		t.Errorf("the right executable: exit 2, stderr %q", stderr)
	}
	for _, exe := range []string{"match-noopt"} {
		code, stdout, stderr := ctxleak(t, "holders", dump, "--binary", filepath.Join(dir, exe))
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, exe+" is not the executable that wrote the dump: ") || !strings.Contains(stderr, "the dump has ") {
			t.Errorf("--binary %s: exit %d, stdout %q, stderr %q; want 2 and one line naming the difference", exe, code, stdout, stderr)
		}
	}
}
