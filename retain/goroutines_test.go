package retain_test

import (
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/internal/leakedg"
	"github.com/ctxleak/ctxleak/internal/leaktest"
	"github.com/ctxleak/ctxleak/retain"
)

// TestCheckGoroutinesUnavailable runs on a Go without the goroutineleak
// profile: CheckGoroutines logs that it is not available and checks the
// values only.
func TestCheckGoroutinesUnavailable(t *testing.T) {
	if pprof.Lookup("goroutineleak") != nil {
		t.Skipf("%s has the goroutineleak profile: TestCheckGoroutines covers it; run this test with GOTOOLCHAIN=go1.26.8 or earlier", runtime.Version())
	}
	tb := &recordingTB{name: t.Name()}
	tr := retain.New(tb, retain.CheckGoroutines(), retain.NoDump())
	tr.Track(make([]byte, 64), "freed")
	if !tr.AssertReleased() || len(tb.failures()) != 0 {
		t.Errorf("AssertReleased failed: %s", tb.text())
	}
	if !strings.Contains(tb.logText(), "the goroutineleak profile is not available in "+runtime.Version()) {
		t.Errorf("log %q, want the profile not available", tb.logText())
	}
}

// TestCheckGoroutines checks, in order: a test that leaks no goroutine
// passes and leaves no dump; one that leaks 5 goroutines holding 16 KiB
// each fails naming them with 80 KiB, but not the goroutine leaked
// before New, with its value still alive explained from the same dump; a
// test after it passes, the process unable to dump.
func TestCheckGoroutines(t *testing.T) {
	if !leaktest.InChild(t) {
		return
	}

	dir := t.TempDir()
	tb := &recordingTB{name: "clean"}
	tr := retain.New(tb, retain.CheckGoroutines(), retain.DumpDir(dir))
	tr.Track(make([]byte, 64), "freed")
	if !tr.AssertReleased() {
		t.Fatalf("a clean test failed:\n%s", tb.text())
	}
	assertEmpty(t, dir)

	leakBefore()
	waitParked(t, 1, "leakBefore")
	dir = t.TempDir()
	tb = &recordingTB{name: "leaky"}
	tr = retain.New(tb, retain.CheckGoroutines(), retain.DumpDir(dir), retain.Timeout(0))
	const n, each = 5, 16 << 10
	leakFive(n, each)
	held := leakPayload(256 << 10)
	tr.Track(held, "held")
	waitParked(t, n, "leakFive")
	if tr.AssertReleased() {
		t.Fatal("AssertReleased passed with goroutines leaked and a value held")
	}
	runtime.KeepAlive(held)
	msg := tb.text()
	for _, want := range []string{
		`"held"`, "of 256.0 KiB retains 256.0 KiB",
		"retain: 5 goroutines started during the test proven leaked by the goroutineleak profile",
		"5 goroutines in github.com/ctxleak/ctxleak/retain_test.leakFive.func1 [chan send]",
		"    created by github.com/ctxleak/ctxleak/retain_test.leakFive at ",
		"heap dump: " + dir,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure: no %q in:\n%s", want, msg)
		}
	}
	m := regexp.MustCompile(`they retain (\d+)\.\d KiB in the heap dump taken just before the profile`).FindStringSubmatch(msg)
	if m == nil {
		m = []string{"", "0"}
	}
	if kib, _ := strconv.Atoi(m[1]); kib < n*each>>10 || kib > 2*n*each>>10 {
		t.Errorf("failure: want the %d goroutines to retain about %d KiB:\n%s", n, n*each>>10, msg)
	}
	if strings.Contains(msg, "leakBefore") {
		t.Errorf("failure names a goroutine leaked before New:\n%s", msg)
	}

	dir = t.TempDir()
	tb = &recordingTB{name: "after"}
	tr = retain.New(tb, retain.CheckGoroutines(), retain.DumpDir(dir))
	if !tr.AssertReleased() {
		t.Errorf("a clean test after leaks failed:\n%s", tb.text())
	}
	assertEmpty(t, dir)
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a passing check left %d files in %s", len(ents), dir)
	}
}

// leakBefore leaks a goroutine blocked for ever in chan receive.
func leakBefore() {
	ch := make(chan int)
	go func() { <-ch }()
}

// leakFive starts n goroutines, each blocked for ever sending on a
// channel no one else has while it holds size bytes.
func leakFive(n, size int) {
	for range n {
		ch := make(chan int)
		go func() {
			b := leakPayload(size)
			ch <- len(b)
			runtime.KeepAlive(b)
		}()
	}
}

// leakPayload returns n bytes on the heap: a make of a size the compiler
// knows could be on the goroutine's stack, which no heap dump counts.
//
//go:noinline
func leakPayload(n int) []byte { return make([]byte, n) }

// waitParked waits, with back-off, until n goroutines whose function
// names fn are parked.
func waitParked(t *testing.T, n int, fn string) {
	t.Helper()
	for wait := time.Millisecond; ; wait *= 2 {
		buf := make([]byte, 4<<20)
		c := 0
		for _, g := range leakedg.Parse(buf[:runtime.Stack(buf, true)], false) {
			if strings.Contains(g.Function, fn) && strings.HasPrefix(g.Wait, "chan ") {
				c++
			}
		}
		if c >= n {
			return
		}
		if wait > 5*time.Second {
			t.Fatalf("%d goroutines of %s parked, want %d", c, fn, n)
		}
		time.Sleep(wait)
	}
}
