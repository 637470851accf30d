package retain_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ctxleak/ctxleak/retain"
)

var (
	globalArray [64]byte
	linkerAlloc = &struct{ a, b, c, d int64 }{1, 2, 3, 4}
	zeroSize    [0]int
)

func topLevel() {}

func TestTrackRefuses(t *testing.T) {
	var nilPtr *[64]byte
	var nilMap map[string]int
	var nilChan chan int
	var nilFunc func()
	tests := []struct {
		name string
		v    any
		want string // in the error
	}{
		{"nil", nil, "it is nil"},
		{"nil pointer", nilPtr, "it is nil"},
		{"nil slice", []byte(nil), "it is nil"},
		{"nil map", nilMap, "it is nil"},
		{"nil chan", nilChan, "it is nil"},
		{"nil func", nilFunc, "it is nil"},
		{"empty string", "", "it is empty"},
		{"slice without capacity", make([]byte, 0), "no capacity"},
		{"pointer to zero-size", new(struct{}), "zero-size"},
		{"pointer to zero-size global", &zeroSize, "zero-size"},
		{"slice of zero-size", make([]struct{}, 8), "zero-size"},
		{"tiny int64", new(int64), "under 16 bytes"},
		{"tiny 15-byte array", new([15]byte), "under 16 bytes"},
		{"tiny slice", make([]byte, 15), "under 16 bytes"},
		{"tiny string", strings.Repeat("x", 15), "under 16 bytes"},
		{"global", &globalArray, "not on the heap: a global"},
		{"linker-allocated", linkerAlloc, "not on the heap: a global"},
		{"string literal", "a string literal, longer than 16 bytes", "read-only data"},
		{"top-level func", topLevel, "static data"},
		{"closure capturing nothing", func() {}, "static data"},
		{"int", 42, "not a reference"},
		{"struct value", struct{ a [64]byte }{}, "not a reference"},
		{"unsafe.Pointer", unsafe.Pointer(new([64]byte)), "unsafe.Pointer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &recordingTB{name: t.Name()}
			err := retain.New(tb).Track(tt.v, "v")
			if err == nil {
				t.Fatal("Track accepted it")
			}
			if !errors.Is(err, retain.ErrNotTrackable) {
				t.Errorf("error %v does not wrap ErrNotTrackable", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `cannot track "v"`) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
			if f := tb.failures(); len(f) != 1 || f[0] != err.Error() {
				t.Errorf("test failures %q, want the error once", f)
			}
			// A tracker for programs returns the error and fails nothing.
			if err := retain.NewTracker().Track(tt.v, "v"); err == nil {
				t.Error("NewTracker's Track accepted it")
			}
		})
	}
}

type handler struct{ buf [64]byte }

func (h *handler) serve() {}

type big struct {
	head  int64
	field [32]byte
	ptr   *int
}

// trackableValues returns values at the edge of what Track accepts; each
// must be freed once dropped, or the check would report false leaks.
func trackableValues() map[string]func() any {
	return map[string]func() any{
		"16-byte pointer-free array": func() any { return new([2]int64) },
		"8-byte struct with pointer": func() any { return &struct{ p *int }{} },
		"16-byte slice":              func() any { return make([]byte, 16) },
		"8-byte slice of pointers":   func() any { return make([]*int, 1) },
		"16-byte string":             func() any { return strings.Repeat("x", 16) },
		"empty map":                  func() any { return make(map[string]int) },
		"map with entries":           func() any { return map[int]int{1: 1, 2: 2, 3: 3} },
		"unbuffered chan":            func() any { return make(chan int) },
		"buffered chan of pointers":  func() any { return make(chan *int, 4) },
		"closure":                    func() any { n := time.Now().UnixNano(); return func() int64 { return n } },
		"method value":               func() any { return (&handler{}).serve },
		"interior pointer":           func() any { return &(&big{}).field },
		"sub-slice":                  func() any { return make([]byte, 64)[8:] },
		"context":                    func() any { return context.WithValue(context.Background(), bodyKey{}, 1) },
	}
}

func TestTrackAcceptsAndSeesRelease(t *testing.T) {
	for name, mk := range trackableValues() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tb := &recordingTB{name: t.Name()}
			tr := retain.New(tb, retain.NoDump())
			trackNew(tr, mk)
			if !tr.AssertReleased() {
				t.Errorf("not released:\n%s", tb.text())
			}
		})
	}
}

//go:noinline
func trackNew(tr *retain.Tracker, mk func() any) {
	if err := tr.Track(mk(), "v"); err != nil {
		panic(err)
	}
}

func TestTrackedDescribesTheObject(t *testing.T) {
	tr := retain.NewTracker(retain.Timeout(0))
	body := make([]byte, 100, 4096)
	tr.Track(body, "request body")
	m := map[string]int{"a": 1}
	tr.Track(m, "cache")
	alive, err := tr.Released(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(alive) != 2 {
		t.Fatalf("%d values alive, want 2", len(alive))
	}
	got := alive[0]
	got.Site = got.Site[:strings.LastIndexByte(got.Site, ':')]
	want := retain.Tracked{
		Label: "request body", Type: "[]uint8", Kind: reflect.Slice,
		Addr: uintptr(unsafe.Pointer(unsafe.SliceData(body))), Size: 4096,
		Site: "retain/track_test.go",
	}
	if got != want {
		t.Errorf("Tracked = %+v\nwant       %+v", got, want)
	}
	if a := alive[1]; a.Type != "map[string]int" || a.Kind != reflect.Map || a.Size != 0 ||
		a.Addr != uintptr(reflect.ValueOf(m).UnsafePointer()) {
		t.Errorf("map: Tracked = %+v", a)
	}
	runtime.KeepAlive(body)
	runtime.KeepAlive(m)
}

func TestReleasedForgetsFreedValues(t *testing.T) {
	tr := retain.NewTracker(retain.Timeout(0))
	a, b := make([]byte, 64), make([]byte, 64)
	tr.Track(a, "a")
	tr.Track(b, "b")
	a = nil
	alive, _ := tr.Released(context.Background())
	if len(alive) != 1 || alive[0].Label != "b" {
		t.Fatalf("alive = %+v, want only b", alive)
	}
	runtime.KeepAlive(b)
	b = nil
	if alive, _ := tr.Released(context.Background()); alive != nil {
		t.Fatalf("alive = %+v after b was dropped", alive)
	}
	_, _ = a, b
}

func TestReleasedStopsWhenCtxEnds(t *testing.T) {
	tr := retain.NewTracker(retain.Timeout(time.Hour))
	held := make([]byte, 64)
	tr.Track(held, "held")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	alive, err := tr.Released(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || len(alive) != 1 {
		t.Errorf("Released = %d alive, %v; want 1, deadline exceeded", len(alive), err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Released took %v after its ctx ended", d)
	}
	runtime.KeepAlive(held)
}

func TestNoDump(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(retain.DumpDirEnv, dir)
	tb := &recordingTB{name: t.Name()}
	tr := retain.New(tb, retain.Timeout(0), retain.NoDump())
	held := make([]byte, 64)
	tr.Track(held, "held")
	if tr.AssertReleased() {
		t.Fatal("AssertReleased passed with the value held")
	}
	runtime.KeepAlive(held)
	if msg := tb.text(); !strings.Contains(msg, "no heap dump (NoDump)") || strings.Contains(msg, "heap dump:") {
		t.Errorf("failure:\n%s", msg)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("NoDump wrote %d files", len(ents))
	}
}

// TestParallelTrackers runs trackers in parallel tests that fail and pass
// at the same time, sharing one dump directory: each reports only its own
// values, and each failure gets its own dump.
func TestParallelTrackers(t *testing.T) {
	dir := t.TempDir()
	const n = 4
	held := make([][]byte, n)
	var mu sync.Mutex
	var dumps []string
	t.Run("group", func(t *testing.T) {
		for i := range n {
			retained := i%2 == 0
			t.Run(string(rune('A'+i)), func(t *testing.T) {
				t.Parallel()
				tb := &recordingTB{name: t.Name()}
				tr := retain.New(tb, retain.Timeout(100*time.Millisecond), retain.DumpDir(dir))
				body := make([]byte, payloadSize)
				tr.Track(body, "body of "+t.Name())
				if retained {
					held[i] = body
				}
				body = nil
				ok := tr.AssertReleased()
				if ok == retained {
					t.Fatalf("AssertReleased = %v; failures:\n%s", ok, tb.text())
				}
				msg := tb.text()
				if !retained {
					return
				}
				// One entry, this test's, explained: the bodies of the other
				// failing tests are in the dump too, but not in the report.
				if strings.Count(msg, `"body of `) != 1 || !strings.Contains(msg, `"body of `+t.Name()+`" []uint8 of 1.0 MiB`) ||
					strings.Count(msg, "    held by ") != 1 || strings.Count(msg, "heap dump: ") != 1 {
					t.Errorf("failure should explain this test's body and no other:\n%s", msg)
				}
				mu.Lock()
				dumps = append(dumps, dumpNamed(t, msg))
				mu.Unlock()
			})
		}
	})
	checkDumps(t, dir, n/2)
	if len(dumps) != n/2 || dumps[0] == dumps[1] {
		t.Errorf("failures name the dumps %q, want %d different ones", dumps, n/2)
	}
	bins, _ := os.ReadDir(dir)
	var kept int
	for _, e := range bins {
		if strings.HasSuffix(e.Name(), ".bin") {
			kept++
		}
	}
	if kept != 1 {
		t.Errorf("%d copies of the binary kept, want 1", kept)
	}
	runtime.KeepAlive(held)
}

// TestReleaseAfterLateCleanup frees the tracked value from a cleanup of
// another object: the cleanup runs on a cleanup goroutine some time after
// the GC that queued it, and only then can a later GC free the value.
func TestReleaseAfterLateCleanup(t *testing.T) {
	tb := &recordingTB{name: t.Name()}
	tr := retain.New(tb, retain.NoDump())
	armLateCleanup(tr)
	if !tr.AssertReleased() {
		t.Errorf("value freed by a late cleanup counted as retained:\n%s", tb.text())
	}
}

var lateHeld sync.Map

//go:noinline
func armLateCleanup(tr *retain.Tracker) {
	body := make([]byte, 4096)
	tr.Track(body, "freed by a cleanup")
	lateHeld.Store("k", body)
	owner := new([64]byte)
	runtime.AddCleanup(owner, func(k string) { lateHeld.Delete(k) }, "k")
}

// TestReportForPrograms checks the report a program gets from a Tracker
// made by NewTracker: the same list and dump as a test failure.
func TestReportForPrograms(t *testing.T) {
	dir := t.TempDir()
	tr := retain.NewTracker(retain.Timeout(0), retain.DumpDir(dir))
	held := make([]byte, 4096)
	tr.Track(held, "cache entry")
	alive, _ := tr.Released(context.Background())
	msg := tr.Report(alive)
	runtime.KeepAlive(held)
	for _, want := range []string{
		"retain: 1 tracked value still alive\n",
		`"cache entry" []uint8 of 4.0 KiB retains 4.0 KiB`,
		"], frame github.com/ctxleak/ctxleak/retain_test.TestReportForPrograms (retain/",
		"heap dump: " + dir,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("report lacks %q:\n%s", want, msg)
		}
	}
	checkDumps(t, dir, 1)
}

// dumpNamed returns the path of the heap dump a failure names.
func dumpNamed(t *testing.T, msg string) string {
	t.Helper()
	for line := range strings.Lines(msg) {
		if p, ok := strings.CutPrefix(line, "heap dump: "); ok {
			return strings.TrimSpace(p)
		}
	}
	t.Fatalf("no heap dump in the failure:\n%s", msg)
	return ""
}
