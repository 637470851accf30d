package retain_test

import (
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/internal/leaktest"
	"github.com/ctxleak/ctxleak/retain"
)

// TestFailureAfterLeakProfile fails a tracker after Go 1.27's goroutineleak
// profile has marked goroutines leaked, where a heap dump is fatal: the
// failure says why it has no dump, writes no file, and the test binary
// lives on.
func TestFailureAfterLeakProfile(t *testing.T) {
	if !leaktest.InChild(t) {
		return
	}
	p := pprof.Lookup("goroutineleak")

	const n = 20
	for range n {
		ch := make(chan []byte)
		go func() { ch <- make([]byte, 4<<10) }()
	}
	for wait := time.Millisecond; p.Count() < n; wait *= 2 {
		if wait > 5*time.Second {
			t.Fatalf("goroutineleak profile: %d leaked, want %d", p.Count(), n)
		}
		if err := p.WriteTo(io.Discard, 0); err != nil {
			t.Fatal(err)
		}
		time.Sleep(wait)
	}

	dir := t.TempDir()
	tb := &recordingTB{name: t.Name()}
	tr := retain.New(tb, retain.Timeout(0), retain.DumpDir(dir))
	held := make([]byte, 64)
	tr.Track(held, "held")
	if tr.AssertReleased() {
		t.Fatal("AssertReleased passed with the value held")
	}
	runtime.KeepAlive(held)
	msg := tb.text()
	if !strings.Contains(msg, `"held"`) ||
		!strings.Contains(msg, "no heap dump: refused to write a heap dump: a goroutineleak profile taken in this process marked") {
		t.Errorf("failure:\n%s", msg)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a refused dump left %d files in %s", len(ents), dir)
	}
}
