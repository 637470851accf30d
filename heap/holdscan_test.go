package heap

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
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

// What no single root holds, in the report's header, is what the
// super-root's kids that are objects retain, however many parts of the
// nodes the scan that adds it up takes.
func TestSharedTotalsAddUp(t *testing.T) {
	t.Parallel()
	for _, pattern := range []string{"shared", "goroutines"} {
		a := runPile(t, pattern, 500).analyze(t)
		var sharedBytes, objects uint64
		for v := range heapdump.NodeID(a.g.NumObjects()) {
			if a.Idom(v) == a.g.SuperRoot() {
				sharedBytes += a.Retained(v)
				objects += a.RetainedObjects(v)
			}
		}
		if sharedBytes == 0 {
			t.Fatalf("%s: nothing shared: the test needs a dump with shared objects", pattern)
		}
		for _, parts := range []int{1, 2, 7} {
			a.scanParts = parts
			rep, err := a.Holders(MinSize(1 << 20))
			if err != nil {
				t.Fatal(err)
			}
			if rep.SharedBytes != sharedBytes || rep.SharedObjects != objects {
				t.Errorf("%s, %d parts: shared %d B in %d objects, want %d B in %d", pattern, parts, rep.SharedBytes, rep.SharedObjects, sharedBytes, objects)
			}
		}
	}
}
