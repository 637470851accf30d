package heap

import (
	"bytes"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// FuzzAnalyze runs the whole holder analysis on mutated dumps, with the
// executable that wrote the seed: dominators, the report, paths, typing
// and the three output formats must never panic.
func FuzzAnalyze(f *testing.F) {
	seed := dumptest.Minimized(f)
	f.Add(seed)
	bin, err := binsym.Open(dumpProg(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range []*binsym.Binary{nil, bin} {
			o := newOptions(nil)
			g, err := heapdump.Read(bytes.NewReader(data), int64(len(data)), "fuzz.bin", o.loadOptions("fuzz.bin", b))
			if err != nil {
				return
			}
			a, err := newAnalysis(g, b, o)
			if err != nil {
				t.Fatalf("analysis of a graph the reader built: %v", err)
			}
			rep, err := a.Holders(MinSize(1))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := rep.WriteText(&out, PlainStyle{}); err != nil {
				t.Fatal(err)
			}
			if err := rep.Profile().Write(&out); err != nil {
				t.Fatal(err)
			}
			addrs := make([]uint64, 0, 8)
			for i := 0; i < a.g.NumObjects() && i < 8; i++ {
				addrs = append(addrs, a.g.ObjectAddr(heapdump.NodeID(i))+1)
			}
			if _, err := a.Explain(addrs); err != nil {
				t.Fatal(err)
			}
		}
	})
}
