package retain_test

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/retain"
)

// BenchmarkTrack measures Track on a 64-byte heap value: the checks, the
// AddCleanup probe and the weak pointer.
func BenchmarkTrack(b *testing.B) {
	objs := make([]*[64]byte, b.N)
	for i := range objs {
		objs[i] = new([64]byte)
	}
	tr := retain.NewTracker()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := tr.Track(objs[i], "v"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssertReleased50MiB measures how soon AssertReleased returns for
// a 50 MiB value that is already unreachable, on the test binary's small
// heap. Target: median under 10 ms.
func BenchmarkAssertReleased50MiB(b *testing.B) {
	var took []time.Duration
	for range b.N {
		b.StopTimer()
		tr := retain.New(b)
		trackNew(tr, func() any { return make([]byte, 50<<20) })
		b.StartTimer()
		start := time.Now()
		if !tr.AssertReleased() {
			b.Fatal("not released")
		}
		took = append(took, time.Since(start))
	}
	reportPercentiles(b, took)
}

// BenchmarkFailureWithDump100MiB measures a failing AssertReleased (one GC,
// the heap dump, the holder analysis and the report) in a process with
// about 100 MiB of heap: a retained 50 MiB payload, held by this frame, and
// about 50 MiB of linked 48-byte nodes. Target: under 2 s.
// BenchmarkFailureParts100MiB splits the dump from the analysis, and
// BenchmarkRelink measures what a first global holder adds to it.
func BenchmarkFailureWithDump100MiB(b *testing.B) {
	payload := make([]byte, 50<<20)
	nodes := buildList(50 << 20 / 48)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	dir := b.TempDir()

	var took, gcs []time.Duration
	var dumpBytes int64
	b.ResetTimer()
	for range b.N {
		tb := &recordingTB{name: "BenchmarkFailure"}
		tr := retain.New(tb, retain.Timeout(0), retain.DumpDir(dir))
		if err := tr.Track(payload, "payload"); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if tr.AssertReleased() {
			b.Fatal("payload released while held")
		}
		took = append(took, time.Since(start))
		if msg := tb.text(); !strings.Contains(msg, "held by goroutine") {
			b.Fatalf("the failure names no holder:\n%s", msg)
		}
		b.StopTimer()
		dumpBytes = removeDumps(b, dir)
		start = time.Now()
		runtime.GC()
		gcs = append(gcs, time.Since(start))
		b.StartTimer()
	}
	b.StopTimer()
	runtime.KeepAlive(payload)
	runtime.KeepAlive(nodes)
	reportPercentiles(b, took)
	// The failure's own GC, for telling the dump's share apart.
	slices.Sort(gcs)
	b.ReportMetric(float64(gcs[len(gcs)/2])/float64(time.Millisecond), "ms-gc-median")
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(dumpBytes)/(1<<20), "dump-MiB")
}

type node struct {
	next *node
	val  [4]int64
	p    *int64
}

func buildList(n int) *node {
	var head *node
	for i := range n {
		head = &node{next: head, val: [4]int64{int64(i)}}
		head.p = &head.val[1]
	}
	return head
}

// removeDumps deletes the dumps in dir and returns the size of the last.
func removeDumps(b *testing.B, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".heapdump") {
			if fi, err := e.Info(); err == nil {
				size = fi.Size()
			}
			os.Remove(dir + "/" + e.Name())
		}
	}
	return size
}

// reportPercentiles adds the median and the 90th percentile, in ms.
func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(p float64) float64 {
		return float64(took[int(p*float64(len(took)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.5), "ms-median")
	b.ReportMetric(at(0.9), "ms-p90")
}
