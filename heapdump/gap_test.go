package heapdump

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// Two 16 KiB objects 65 slots apart look like one span with 64 free slots,
// but another span lies between them: the dump is read again without
// groups that skip slots, and every object is found.
func TestGroupGapOverOtherSpan(t *testing.T) {
	e := dumptest.NewEncoder()
	e.U(tagParams, 0, 8, 0x100000, 0x300000).S([]byte("amd64")).S([]byte("go1.26.8")).U(2)
	const big = 0x4000
	e.U(tagObject, 0x100000).S(make([]byte, big)).Fields(nil)
	e.U(tagObject, 0x100000+65*big).S(make([]byte, big)).Fields(nil)
	e.U(tagObject, 0x110000).S(make([]byte, 0x2000)).Fields(nil)
	e.U(tagObject, 0x112000).S(make([]byte, 0x2000)).Fields(nil)
	e.U(tagEOF)
	g, err := Read(bytes.NewReader(e.B), int64(len(e.B)), "gap.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[uint64]NodeID{0x100000: 0, 0x100000 + 65*big + 8: 1, 0x110010: 2, 0x112000: 3} {
		if i, ok := g.Find(addr); !ok || i != want {
			t.Errorf("Find(%#x) = %d, %v; want %d", addr, i, ok, want)
		}
	}
	if i, ok := g.Find(0x108000); ok {
		t.Errorf("Find(0x108000) = %d in the gap, want none", i)
	}
	for i := NodeID(0); i < 4; i++ {
		if _, err := g.ObjectRecord(i, 16); err != nil {
			t.Errorf("ObjectRecord(%d): %v", i, err)
		}
	}
	// Objects that overlap without a gap are still an error.
	e = dumptest.NewEncoder()
	e.U(tagParams, 0, 8, 0x100000, 0x300000).S([]byte("amd64")).S([]byte("go1.26.8")).U(2)
	e.U(tagObject, 0x100000).S(make([]byte, big)).Fields(nil)
	e.U(tagObject, 0x102000).S(make([]byte, 0x2000)).Fields(nil)
	e.U(tagEOF)
	if _, err := Read(bytes.NewReader(e.B), int64(len(e.B)), "overlap.bin", Options{}); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("overlapping objects: err = %v", err)
	}
}
