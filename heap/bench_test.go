package heap

import (
	"io"
	"os"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// BenchmarkHolders runs what "ctxleak holders" does on the dump named by
// $CTXLEAK_BENCH_DUMP with the executable named by $CTXLEAK_BENCH_BINARY
// (bench/holders.sh writes both): open the executable, Analyze, Holders and
// the text report, with the --min-size $CTXLEAK_BENCH_MIN_SIZE if set. It is
// skipped when either is unset. bench/holders.sh measures wall time and peak
// RSS of whole runs of the command; this one is for -cpuprofile and
// -memprofile. It does not pass ReturnMemory, which the command does: in a
// loop, every run would give its memory back to the system and fault it in
// again, which one run of the command pays once (bench/phases passes it).
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
		rep, err := a.Holders(MinSize(minSize), Top(10))
		if err != nil {
			b.Fatal(err)
		}
		if err := rep.WriteText(io.Discard, PlainStyle{}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(a.stats.Objects), "objects")
		a.Close()
		bin.Close()
	}
}

// BenchmarkHoldersChain groups a chain of 20,000 large objects, each
// inside the one before (testdata/piles chain:4096): the members inside
// one another fold into the outermost in time linear in the chain. The
// dump is analysed once; each iteration builds the report and its text.
// bench/chain.sh measures whole runs of the command on the 6,000 x 1 MiB
// chain of issue 38.
func BenchmarkHoldersChain(b *testing.B) {
	const n = 20000
	a := runPile(b, "chain:4096", n).analyze(b)
	for b.Loop() {
		rep, err := a.Holders(MinSize(4096))
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Groups) == 0 || rep.Groups[0].RetainedBytes > rep.LiveBytes {
			b.Fatalf("groups %d, the first of %d bytes in a live heap of %d", len(rep.Groups), rep.Groups[0].RetainedBytes, rep.LiveBytes)
		}
		if err := rep.WriteText(io.Discard, PlainStyle{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/link")
}
