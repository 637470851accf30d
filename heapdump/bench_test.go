package heapdump

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
		b.ReportMetric(float64(g.Stats().Objects), "objects")
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
	i := NodeID(0)
	for b.Loop() {
		i = (i + 7919*104729) % NodeID(g.NumObjects())
		if _, err := g.ObjectRecord(i, 64); err != nil {
			b.Fatal(err)
		}
	}
}
