// Package leaktest runs a test that takes Go 1.27's goroutineleak profile
// in a child test process of its own: the profile marks the goroutines it
// proves leaked for the life of the process, and from then on every heap
// dump of that process is refused (internal/selfdump), so the test binary
// that runs the other tests must not take it.
package leaktest

import (
	"fmt"
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

// Toolchain is the Go release whose toolchain builds a child program that
// takes the goroutineleak profile when the running Go has none.
const Toolchain = "go1.27.3"

// BuildEnv returns what to add to the environment of a go build of a
// program that takes the goroutineleak profile: nothing when this Go has
// the profile, else GOTOOLCHAIN=Toolchain, which the go command fetches
// through the module proxy. It fails, saying why, when that toolchain
// cannot be had.
func BuildEnv() ([]string, error) {
	if pprof.Lookup("goroutineleak") != nil {
		return nil, nil
	}
	env := []string{"GOTOOLCHAIN=" + Toolchain}
	cmd := exec.Command("go", "version")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("needs Go 1.27's goroutineleak profile; %s has none and GOTOOLCHAIN=%s is not available: %v: %s", runtime.Version(), Toolchain, err, out)
	}
	return env, nil
}
