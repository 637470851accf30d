// Package leaktest runs a test that takes Go 1.27's goroutineleak profile
// in a child test process of its own: the profile marks the goroutines it
// proves leaked for the life of the process, and from then on every heap
// dump of that process is refused (internal/selfdump), so the test binary
// that runs the other tests must not take it.
package leaktest

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
)

// childEnv names, in the child, the test it runs.
const childEnv = "CTXLEAK_LEAKTEST_CHILD"

// InChild reports whether t runs in its child test process, where the
// test goes on. In the parent it runs the child, fails t unless the child
// passed, and returns false: the caller returns. Before Go 1.27, which has
// no goroutineleak profile, it skips t. t must be a top-level test.
func InChild(t *testing.T) bool {
	t.Helper()
	if pprof.Lookup("goroutineleak") == nil {
		t.Skipf("needs Go 1.27's goroutineleak profile (runtime/pprof), absent in %s; CI runs it with GOTOOLCHAIN=go1.27.3", runtime.Version())
	}
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("child test process: %v\n%s", err, out)
	}
	return false
}
