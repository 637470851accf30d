package heap

import (
	"bytes"
	"strings"
	"testing"
)

// Two 16 KiB objects 65 slots apart look like one span with 64 free slots,
// but another span lies between them: the dump is read again without
// groups that skip slots, and every object is found.
func TestGroupGapOverOtherSpan(t *testing.T) {
	e := newEncoder()
	e.u(tagParams, 0, 8, 0x100000, 0x300000).s([]byte("amd64")).s([]byte("go1.26.8")).u(2)
	const big = 0x4000
	e.u(tagObject, 0x100000).s(make([]byte, big)).fields(nil)
	e.u(tagObject, 0x100000+65*big).s(make([]byte, big)).fields(nil)
	e.u(tagObject, 0x110000).s(make([]byte, 0x2000)).fields(nil)
	e.u(tagObject, 0x112000).s(make([]byte, 0x2000)).fields(nil)
	e.u(tagEOF)
	g, err := Read(bytes.NewReader(e.b), int64(len(e.b)), "gap.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[uint64]uint32{0x100000: 0, 0x100000 + 65*big + 8: 1, 0x110010: 2, 0x112000: 3} {
		if i, ok := g.Find(addr); !ok || i != want {
			t.Errorf("Find(%#x) = %d, %v; want %d", addr, i, ok, want)
		}
	}
	if i, ok := g.Find(0x108000); ok {
		t.Errorf("Find(0x108000) = %d in the gap, want none", i)
	}
	for i := uint32(0); i < 4; i++ {
		if _, err := g.ObjectRecord(i, 16); err != nil {
			t.Errorf("ObjectRecord(%d): %v", i, err)
		}
	}
	// Objects that overlap without a gap are still an error.
	e = newEncoder()
	e.u(tagParams, 0, 8, 0x100000, 0x300000).s([]byte("amd64")).s([]byte("go1.26.8")).u(2)
	e.u(tagObject, 0x100000).s(make([]byte, big)).fields(nil)
	e.u(tagObject, 0x102000).s(make([]byte, 0x2000)).fields(nil)
	e.u(tagEOF)
	if _, err := Read(bytes.NewReader(e.b), int64(len(e.b)), "overlap.bin", Options{}); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("overlapping objects: err = %v", err)
	}
}
