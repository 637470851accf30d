package heap

import (
	"os"
	"testing"
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
