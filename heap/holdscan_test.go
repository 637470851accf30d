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
	}{{"shared", 500}, {"goroutines", 2000}, {"indexed", 3000}} {
		a := runPile(t, tt.pattern, tt.n).analyze(t)
		var want []byte
		for _, parts := range []int{a.g.NumNodes(), 1, 2, 3, 7, 64} {
			a.scanParts = parts
			var b bytes.Buffer
			// Every object is large at MinSize 1: its first 20 groups.
			for _, o := range [][]Option{{MinSize(1), Top(20)}, {MinSize(4 << 10), Top(0)}, {MinSize(1 << 20), Top(0)}} {
				rep, err := a.Holders(o...)
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
