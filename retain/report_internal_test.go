package retain

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

type fakeTB struct {
	name string
	mu   sync.Mutex
	errs []string
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return f.name }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.errs, "\n")
}

// setExplain replaces the explanation seam for one test.
func setExplain(t *testing.T, fn func(string, string, []Tracked) (*explanation, error)) {
	old := explain
	explain = fn
	t.Cleanup(func() { explain = old })
}

// TestExplainSeam checks what the analysis receives: the dump just written,
// the kept binary, and each value still alive with the address that the
// dump has an object record for.
func TestExplainSeam(t *testing.T) {
	var gotDump, gotBin string
	var gotAlive []Tracked
	setExplain(t, func(dump, bin string, alive []Tracked) (*explanation, error) {
		gotDump, gotBin, gotAlive = dump, bin, alive
		return &explanation{
			entries: []string{"\"request body\" held by goroutine 7 in main.worker\n"},
			notes:   []string{"globals are named by address"},
		}, nil
	})
	dir := t.TempDir()
	tb := &fakeTB{name: t.Name()}
	tr := New(tb, Timeout(0), DumpDir(dir))
	body := make([]byte, 1<<20)
	tr.Track(body, "request body")
	if tr.AssertReleased() {
		t.Fatal("AssertReleased passed with the body held")
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(body)))
	runtime.KeepAlive(body)

	if len(gotAlive) != 1 || gotAlive[0].Addr != addr || gotAlive[0].Size != 1<<20 ||
		gotAlive[0].Label != "request body" || gotAlive[0].Type != "[]uint8" {
		t.Errorf("explain got alive = %+v, want the body at %#x", gotAlive, addr)
	}
	if filepath.Dir(gotDump) != dir {
		t.Errorf("explain got dump %q, want one in %s", gotDump, dir)
	}
	if fi, err := os.Stat(gotBin); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("explain got binary %q: %v", gotBin, err)
	}
	dump, err := os.ReadFile(gotDump)
	if err != nil {
		t.Fatal(err)
	}
	// An object record: tag 1, then the address as a uvarint.
	rec := binary.AppendUvarint([]byte{1}, uint64(addr))
	if !bytes.Contains(dump, rec) {
		t.Errorf("the dump has no object record at %#x", addr)
	}
	msg := tb.text()
	for _, want := range []string{
		"\n\n\"request body\" held by goroutine 7 in main.worker\n\nnote: globals are named by address\nheap dump: " + gotDump,
		"\nrun: ctxleak holders " + gotDump + " \\\n    --binary " + gotBin,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "tracked at") {
		t.Errorf("failure lists the value besides its explanation:\n%s", msg)
	}
}

func TestExplainFails(t *testing.T) {
	setExplain(t, func(string, string, []Tracked) (*explanation, error) {
		return nil, errors.New("dump truncated at byte 42")
	})
	tb := &fakeTB{name: t.Name()}
	tr := New(tb, Timeout(0), DumpDir(t.TempDir()))
	held := make([]byte, 64)
	tr.Track(held, "held")
	tr.AssertReleased()
	runtime.KeepAlive(held)
	msg := tb.text()
	for _, want := range []string{`"held" []uint8, 64 B at 0x`, "holders not found: dump truncated at byte 42", "run: ctxleak holders "} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure lacks %q:\n%s", want, msg)
		}
	}
}

func TestDumpDirFromEnvAndDefault(t *testing.T) {
	setExplain(t, nil)
	fail := func(opts ...Option) string {
		tb := &fakeTB{name: "TestX/sub case"}
		tr := New(tb, append([]Option{Timeout(0)}, opts...)...)
		held := new([64]byte)
		tr.Track(held, "held")
		tr.AssertReleased()
		runtime.KeepAlive(held)
		return dumpPath(t, tb.text())
	}

	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv(DumpDirEnv, "")
	p := fail()
	if dir := filepath.Dir(p); filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "ctxleak-TestX_sub_case-") {
		t.Errorf("default dump %s, want it in a new ctxleak-TestX_sub_case-* directory under %s", p, tmp)
	}
	if !strings.HasPrefix(filepath.Base(p), "TestX_sub_case-") {
		t.Errorf("dump file %s is not named after the test", p)
	}

	env := filepath.Join(t.TempDir(), "made", "by", "retain")
	t.Setenv(DumpDirEnv, env)
	p1, p2 := fail(), fail()
	if filepath.Dir(p1) != env || filepath.Dir(p2) != env || p1 == p2 {
		t.Errorf("dumps %s and %s, want two files in $%s=%s", p1, p2, DumpDirEnv, env)
	}
	if fi, err := os.Stat(env); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dump dir: %v, %v; want mode 0700", fi.Mode(), err)
	}

	opt := t.TempDir()
	if p := fail(DumpDir(opt)); filepath.Dir(p) != opt {
		t.Errorf("dump %s, want it in the DumpDir %s over the environment", p, opt)
	}
}

// dumpPath finds the dump path in a failure message.
func dumpPath(t *testing.T, msg string) string {
	t.Helper()
	for line := range strings.Lines(msg) {
		if p, ok := strings.CutPrefix(line, "heap dump: "); ok {
			return strings.TrimSpace(p)
		}
	}
	t.Fatalf("no heap dump in the failure:\n%s", msg)
	return ""
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"TestA":                  "TestA",
		"TestA/sub case#01":      "TestA_sub_case_01",
		"":                       "ctxleak",
		"../../etc":              ".._.._etc",
		strings.Repeat("x", 100): strings.Repeat("x", 60),
		"TestÜnicode/ü":          "Test_nicode__",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}
