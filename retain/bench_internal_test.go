package retain

import (
	"os"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ctxleak/ctxleak/binsym"
)

type benchNode struct {
	next *benchNode
	val  [4]int64
	p    *int64
}

// BenchmarkFailureParts100MiB splits a failure's cost on a process with
// about 100 MiB of heap (a 50 MiB payload, 50 MiB of linked 48-byte nodes)
// into writing the heap dump (world stopped) and explaining it (reading the
// dump, dominators, the holder's path and text).
func BenchmarkFailureParts100MiB(b *testing.B) {
	payload := make([]byte, 50<<20)
	var head *benchNode
	for i := range 50 << 20 / 48 {
		head = &benchNode{next: head, val: [4]int64{int64(i)}}
		head.p = &head.val[1]
	}
	runtime.GC()
	alive := []Tracked{{
		Label: "payload", Type: "[]uint8", Kind: reflect.Slice,
		Addr: uintptr(unsafe.Pointer(unsafe.SliceData(payload))), Size: uintptr(len(payload)),
	}}
	dir := b.TempDir()
	defer forgetRunningBinary()
	var dumps, explains []time.Duration
	for b.Loop() {
		start := time.Now()
		d, err := writeDump(dir, "bench")
		if err != nil {
			b.Fatal(err)
		}
		dumps = append(dumps, time.Since(start))
		start = time.Now()
		ex, err := explainHolders(d.path, d.binary, alive)
		if err != nil || ex.entries[0] == "" {
			b.Fatalf("explain: %v, %+v", err, ex)
		}
		explains = append(explains, time.Since(start))
		os.Remove(d.path)
	}
	runtime.KeepAlive(payload)
	runtime.KeepAlive(head)
	b.ReportMetric(median(dumps), "ms-dump-median")
	b.ReportMetric(median(explains), "ms-explain-median")
}

// BenchmarkRelink measures what naming the globals of a stripped test
// binary costs the first failure that needs it: go test -c, with the build
// cache warm, and reading and checking the relinked binary.
func BenchmarkRelink(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	bin, err := binsym.Open(exe)
	if err != nil {
		b.Fatal(err)
	}
	defer bin.Close()
	if bin.HasSymbols() {
		b.Skip("the test binary has symbols: nothing to relink")
	}
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := relink(bin); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.ReportMetric(median(took), "ms-median")
}

func median(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// forgetRunningBinary closes the executable that explainHolders opened and
// keeps for the process, so that the benchmarks after run as in a process
// where nothing failed: every collection would mark its symbols and types
// (about 23,000 objects), which made AssertReleased50MiB, run after this
// one, take 2.6 ms rather than 1.3.
func forgetRunningBinary() {
	if bin, err := runningBinary(); err == nil {
		bin.Close()
	}
	runningBinary = sync.OnceValues(openRunningBinary)
}
