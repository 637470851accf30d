package watch_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/watch"
)

// benchHeap is a live heap of 100 MiB in about a million 96-byte objects
// chained by pointers, which a GC marks one by one, made once per process.
var benchHeap = sync.OnceValue(func() *benchNode {
	var head *benchNode
	for range (100 << 20) / 96 {
		head = &benchNode{next: head}
	}
	return head
})

type benchNode struct {
	next    *benchNode
	payload [88]byte
}

// benchLeaked are goroutines blocked for ever, for the profile to find.
var benchLeaked = sync.OnceFunc(func() {
	for range 1000 {
		ch := make(chan int)
		go func() { ch <- 1 }()
	}
})

// BenchmarkCheckLeaks measures a leak check in a service with a live heap
// of 100 MiB and 1,000 leaked goroutines: Go 1.27's goroutineleak profile
// (one GC cycle that detects leaks) and the traceback that finds the
// goroutines' ids, without a heap dump. BenchmarkCheckLeaksBaselineGC is
// a plain runtime.GC on the same heap: the difference is what the check
// adds to a GC.
func BenchmarkCheckLeaks(b *testing.B) {
	if !hasLeakProfile() {
		b.Skipf("needs Go 1.27's goroutineleak profile, absent in %s; run with GOTOOLCHAIN=go1.27.3", runtime.Version())
	}
	head := benchHeap()
	benchLeaked()
	w := watch.New(watch.Options{Logger: quietLogger()})
	defer w.Close()
	pauses := startPauses(b)
	for range b.N {
		if c := w.CheckLeaks(); c.Count < 1000 || c.Err != "" {
			b.Fatalf("leak check: %d leaked, error %q; want 1000", c.Count, c.Err)
		}
	}
	pauses()
	runtime.KeepAlive(head)
}

// startPauses resets b's timer and returns a func that stops it and
// reports the GC's stop-the-world pauses per op (pause-ns/op).
func startPauses(b *testing.B) func() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	start := ms.PauseTotalNs
	b.ResetTimer()
	return func() {
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.PauseTotalNs-start)/float64(b.N), "pause-ns/op")
	}
}

func BenchmarkCheckLeaksBaselineGC(b *testing.B) {
	head := benchHeap()
	benchLeaked()
	pauses := startPauses(b)
	for range b.N {
		runtime.GC()
	}
	pauses()
	runtime.KeepAlive(head)
}
