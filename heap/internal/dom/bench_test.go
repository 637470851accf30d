package dom_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
	"github.com/ctxleak/ctxleak/heap/internal/dom/internal/graphgen"
)

// benchSizes are the node counts BenchmarkDominators runs at: small by
// default, so that go test -bench . stays quick; set CTXLEAK_DOM_BENCH to a
// comma-separated list such as "1.5M,3M,15M" for the sizes of the targets.
func benchSizes(b *testing.B) []int {
	spec := os.Getenv("CTXLEAK_DOM_BENCH")
	if spec == "" {
		return []int{150_000}
	}
	var sizes []int
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSpace(s)
		mult := 1.0
		switch {
		case strings.HasSuffix(s, "M"):
			mult, s = 1e6, strings.TrimSuffix(s, "M")
		case strings.HasSuffix(s, "k"):
			mult, s = 1e3, strings.TrimSuffix(s, "k")
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f*mult < 1 {
			b.Fatalf("CTXLEAK_DOM_BENCH=%q: bad size %q", spec, s)
		}
		sizes = append(sizes, int(f*mult))
	}
	return sizes
}

func sizeName(n int) string {
	if n%100_000 == 0 {
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "M"
	}
	return strconv.Itoa(n)
}

// BenchmarkDominators times what the holder report needs of this package on a
// heap-shaped graph and on a random one of the same size and edge count: the
// dominator tree and the retained size of every node. allocMiB/op is all the
// memory allocated on the way, results included. New populates its arrays
// from the size it does outside the tests, whose TestMain lowers it.
func BenchmarkDominators(b *testing.B) {
	defer dom.SetPopulateMin(dom.SetPopulateMin(dom.DefaultPopulateMin))
	for _, n := range benchSizes(b) {
		for _, shape := range []string{"heap", "random"} {
			b.Run(fmt.Sprintf("shape=%s/n=%s", shape, sizeName(n)), func(b *testing.B) {
				var h graphgen.Heap
				if shape == "heap" {
					h = graphgen.HeapShape(n, 1)
				} else {
					h = graphgen.Random(n, n*5/3, 0.9, 1)
				}
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b.ResetTimer()
				for b.Loop() {
					t, err := dom.New(h.Graph, h.Root)
					if err != nil {
						b.Fatal(err)
					}
					dom.Retained(t, h.Sizes)
				}
				b.StopTimer()
				runtime.ReadMemStats(&after)
				ops := float64(b.N)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/ops/(1<<20), "allocMiB/op")
				b.ReportMetric(float64(len(h.Graph.Succ)), "edges")
			})
		}
	}
}
