package watch_test

import (
	"io"
	"net/http"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/internal/leaktest"
	"github.com/ctxleak/ctxleak/watch"
)

// TestHeapDumpRefusedAfterLeakProfile takes Go 1.27's goroutineleak
// profile in a process with leaked goroutines, where a heap dump is fatal:
// the endpoints that dump answer 409 with the reason, and the process
// lives on. A dump taken before the profile is served as usual.
func TestHeapDumpRefusedAfterLeakProfile(t *testing.T) {
	if !leaktest.InChild(t) {
		return
	}
	p := pprof.Lookup("goroutineleak")

	w := watch.New(watch.Options{AllowHeapDump: true, Logger: quietLogger()})
	defer w.Close()
	base := serve(t, w.Handler())
	const n = 20
	leakGoroutines(n)
	_, body := fetch(t, base+"/debug/ctxleak/heapdump", http.StatusOK)
	if !strings.HasPrefix(body, "go1.7 heap dump\n") {
		t.Fatalf("the dump before the profile is not a heap dump: %.40q", body)
	}
	takeLeakProfile(t, p, n)
	for _, path := range []string{"/debug/ctxleak/heapdump", "/debug/ctxleak/holders"} {
		_, body := fetch(t, base+path, http.StatusConflict)
		if !strings.Contains(body, "refused to write a heap dump: a goroutineleak profile taken in this process marked") {
			t.Errorf("GET %s after the profile: %q, want the reason of the refusal", path, body)
		}
	}
	fetch(t, base+"/debug/ctxleak/status", http.StatusOK)
}

// leakGoroutines starts n goroutines, each blocked for ever sending on a
// channel no one else has.
func leakGoroutines(n int) {
	for range n {
		ch := make(chan []byte)
		go func() { ch <- make([]byte, 4<<10) }()
	}
}

// takeLeakProfile takes p, the goroutineleak profile, until it reports at
// least n goroutines (one not yet parked is not leaked yet), with back-off.
func takeLeakProfile(t *testing.T, p *pprof.Profile, n int) {
	t.Helper()
	for wait := time.Millisecond; ; wait *= 2 {
		if err := p.WriteTo(io.Discard, 0); err != nil {
			t.Fatal(err)
		}
		if p.Count() >= n {
			return
		}
		if wait > 5*time.Second {
			t.Fatalf("goroutineleak profile: %d leaked, want %d", p.Count(), n)
		}
		time.Sleep(wait)
	}
}
