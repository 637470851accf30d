package heap

import (
	"io"
	"os"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// BenchmarkLoad reads the dump named by $CTXLEAK_BENCH_DUMP (for example one
// written by bench/heapgen) and builds its graph. It is skipped when the
// variable is unset. bench/heapread.sh measures wall time and peak RSS of
// whole runs.
func BenchmarkLoad(b *testing.B) {
	path := os.Getenv("CTXLEAK_BENCH_DUMP")
	if path == "" {
		b.Skip("CTXLEAK_BENCH_DUMP is not set")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		g, err := Load(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(g.Stats.Objects), "objects")
		g.Close()
	}
}

// BenchmarkObjectRecord re-reads object records of the dump named by
// $CTXLEAK_BENCH_DUMP, as the holder report does for the few objects on a
// path: each call reads from the start of the object's run of records.
func BenchmarkObjectRecord(b *testing.B) {
	path := os.Getenv("CTXLEAK_BENCH_DUMP")
	if path == "" {
		b.Skip("CTXLEAK_BENCH_DUMP is not set")
	}
	g, err := Load(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	i := uint32(0)
	for b.Loop() {
		i = (i + 7919*104729) % uint32(g.NumObjects)
		if _, err := g.ObjectRecord(i, 64); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHolders runs what "ctxleak holders" does on the dump named by
// $CTXLEAK_BENCH_DUMP with the executable named by $CTXLEAK_BENCH_BINARY
// (bench/holders.sh writes both): open the executable, Analyze, Holders and
// the text report, with the --min-size $CTXLEAK_BENCH_MIN_SIZE if set. It is
// skipped when either is unset. bench/holders.sh measures wall time and peak
// RSS of whole runs of the command; this one is for -cpuprofile and
// -memprofile.
func BenchmarkHolders(b *testing.B) {
	path, exe := os.Getenv("CTXLEAK_BENCH_DUMP"), os.Getenv("CTXLEAK_BENCH_BINARY")
	if path == "" || exe == "" {
		b.Skip("CTXLEAK_BENCH_DUMP or CTXLEAK_BENCH_BINARY is not set")
	}
	var minSize uint64
	if s := os.Getenv("CTXLEAK_BENCH_MIN_SIZE"); s != "" {
		n, err := bytesize.Parse(s)
		if err != nil || n <= 0 {
			b.Fatalf("CTXLEAK_BENCH_MIN_SIZE=%q: want a size such as 1MiB", s)
		}
		minSize = uint64(n)
	}
	for b.Loop() {
		bin, err := binsym.Open(exe)
		if err != nil {
			b.Fatal(err)
		}
		a, err := Analyze(path, bin)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := a.Holders(HolderOptions{MinSize: minSize, Top: 10})
		if err != nil {
			b.Fatal(err)
		}
		if err := rep.WriteText(io.Discard, PlainStyle{}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(a.Stats.Objects), "objects")
		a.Close()
		bin.Close()
	}
}
