package heapdump

import (
	"bytes"
	"testing"

	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// Two spans of one size class, consecutive in the runtime's span list but
// a page apart, with a span of another size class between them that comes
// later in the dump: the first two must not make one group that covers the
// third (a real dump failed with "overlaps" this way).
func TestGroupGapHoldsAnotherSpan(t *testing.T) {
	const base = 0x100000
	e := dumptest.NewEncoder()
	e.U(tagParams, 0, 8, base, base+1<<20).S([]byte("amd64")).S([]byte("go1.26.8")).U(2)
	a := uint64(base + runtimePage - 128) // the last slot of a one-page span of 128-byte objects
	c := uint64(base + 2*runtimePage)     // the first slot of the next such span
	f := uint64(base + runtimePage)       // a 32-byte object of the span between them
	e.U(tagObject, a).S(make([]byte, 128)).Fields(nil)
	e.U(tagObject, c).S(make([]byte, 128)).Fields(nil)
	e.U(tagObject, f).S(make([]byte, 32)).Fields(nil)
	e.U(tagEOF)
	g, err := Read(bytes.NewReader(e.B), int64(len(e.B)), "gap.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, addr := range []uint64{a + 8, c + 120, f + 8} {
		if got, ok := g.Find(addr); !ok || got != NodeID(i) {
			t.Errorf("Find(%#x) = %d, %v; want object %d", addr, got, ok, i)
		}
	}
	if _, ok := g.Find(f + 32); ok {
		t.Errorf("Find(%#x) found an object in a free slot", f+32)
	}
}
