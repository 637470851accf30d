package selfdump

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/internal/leaktest"
	"github.com/ctxleak/ctxleak/internal/testbuild"
)

// TestWrite writes a dump of the test process: a new 0600 file that starts
// as every heap dump does. No goroutineleak profile is taken in this
// process, so Check has nothing to refuse.
func TestWrite(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatalf("Check in a process never profiled for leaks: %v", err)
	}
	dir := t.TempDir()
	d, err := Write(dir, "t-*.heapdump")
	if err != nil {
		t.Fatal(err)
	}
	assertDump(t, d)
	d2, err := WriteFile(filepath.Join(dir, "fixed.heapdump"))
	if err != nil {
		t.Fatal(err)
	}
	assertDump(t, d2)
	if _, err := WriteFile(d2.Path); err == nil {
		t.Errorf("WriteFile over the existing %s: no error", d2.Path)
	}
}

func assertDump(t *testing.T, d Dump) {
	t.Helper()
	st, err := os.Stat(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || st.Size() != d.Size || d.Size < 1000 {
		t.Errorf("%s: mode %v, %d bytes, Dump.Size %d; want 0600 and the same size", d.Path, st.Mode(), st.Size(), d.Size)
	}
	b, err := os.ReadFile(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go1.7 heap dump\n")) {
		t.Errorf("%s does not start as a heap dump: %q", d.Path, b[:min(len(b), 16)])
	}
}

// TestMarked reads the leaked status from goroutine headers only.
func TestMarked(t *testing.T) {
	for _, c := range []struct {
		stacks string
		want   bool
	}{
		{"goroutine 1 [running]:\nmain.main()\n\t/x.go:1\n", false},
		{"goroutine 1 [running]:\n\ngoroutine 21 [chan send (leaked)]:\nmain.f()\n", true},
		{"goroutine 21 [chan send (leaked), 3 minutes]:\nmain.f()\n", true},
		{"goroutine 9 gp=0xc m=nil [sync.Mutex.Lock (leaked)]:", true},
		{"goroutine 1 [select (no cases)]:\nmain.main()\n\t/tmp/a [chan send (leaked)]:/x.go:3\n", false},
		{"goroutine 4 [chan receive]:\ngoroutine (leaked)]:\n", false},
		{"", false},
	} {
		if got := marked([]byte(c.stacks)); got != c.want {
			t.Errorf("marked(%q) = %v, want %v", c.stacks, got, c.want)
		}
	}
}

// TestSurvivesLeakProfile runs leakprog, built with a Go that has the
// goroutineleak profile (this one, or else go1.27.3 through GOTOOLCHAIN),
// and checks that a dump after the profile is refused where the runtime
// would die: the same dump unguarded kills the child.
func TestSurvivesLeakProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a child program")
	}
	env, err := leaktest.BuildEnv()
	if err != nil {
		t.Skip(err)
	}
	exe := filepath.Join(t.TempDir(), "leakprog")
	if out, err := testbuild.Build(exe, env, "./testdata/leakprog"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	out := runChild(t, exe, "guarded", 0)
	for _, want := range []string{
		"goroutineleak profile: 50\n",
		"before the profile: dump written",
		"after the profile: refused to write a heap dump: a goroutineleak profile taken in this process marked 50 goroutine(s) leaked",
		"ok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("leakprog guarded: no %q in its output:\n%s", want, out)
		}
	}

	// Without the guard the same dump is fatal: the refusal above is needed.
	if out := runChild(t, exe, "raw", 2); !strings.Contains(out, "fatal error: dumpgs in STW - bad status") || strings.Contains(out, "ok\n") {
		t.Errorf("leakprog raw: want the runtime's fatal error, got:\n%s", out)
	}

	// Dump, then profile, under one lock: the first call gets both, the
	// second only the profile, the dump refused.
	out = runChild(t, exe, "both", 0)
	if !regexp.MustCompile(`(?m)^first: dump of [1-9]\d* bytes, 50 leaked, err <nil>\nsecond: dump of 0 bytes, 50 leaked, err refused to write a heap dump`).MatchString(out) {
		t.Errorf("leakprog both: want the dump then the profile, then the profile alone; got:\n%s", out)
	}

	// The main goroutine in select {} is counted; on Go 1.27 its mark is
	// taken back and the dump written, else the dump is refused.
	out = runChild(t, exe, "select", 0)
	want := "main marked: false\nmain in select: dump written"
	if strings.Contains(out, "main marked: true") {
		want = "main marked: true\nmain in select: refused to write a heap dump"
	}
	if !strings.Contains(out, want) {
		t.Errorf("leakprog select: want %q, got:\n%s", want, out)
	}
}

// runChild runs exe with mode and returns its output; it fails the test
// unless the exit code is want.
func runChild(t *testing.T, exe, mode string, want int) string {
	t.Helper()
	out, err := exec.Command(exe, mode).CombinedOutput()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Errorf("leakprog %s: exit code %d, want %d; output:\n%s", mode, code, want, out)
	}
	return string(out)
}
