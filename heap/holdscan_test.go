package heap

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The holdings' groups do not depend on how many parts of the nodes are
// scanned at once, wherever the parts split runs of shared holdings. With
// a part per node, each run is one holding.
func TestScanPartsAgree(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pattern string
		n       int
	}{{"shared", 500}, {"goroutines", 2000}, {"list", 20_000}, {"indexed", 20_000}} {
		a := runPile(t, tt.pattern, tt.n).analyze(t)
		var want []byte
		for _, parts := range []int{a.g.NumNodes(), 1, 2, 3, 7, 64} {
			a.scanParts = parts
			var b bytes.Buffer
			for _, min := range []uint64{1, 4 << 10, 1 << 20} {
				rep, err := a.Holders(MinSize(min), Top(0))
				if err != nil {
					t.Fatal(err)
				}
				j, err := json.Marshal(rep)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(j)
			}
			if want == nil {
				want = b.Bytes()
				continue
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s: the report with %d parts differs from that with one per node:\n%s\nwant\n%s", tt.pattern, parts, b.Bytes(), want)
			}
		}
	}
}
