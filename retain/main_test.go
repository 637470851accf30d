package retain_test

import (
	"flag"
	"testing"

	"github.com/ctxleak/ctxleak/internal/testexit"
	"github.com/ctxleak/ctxleak/retain"
)

// TestMain records every allocation's site, as the package documentation
// recommends, so that failures name where payloads and timers were made.
// Benchmarks run with the default sampling, which is what they measure.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		retain.EnableAllocSites()
	}
	testexit.Exit(m.Run())
}
