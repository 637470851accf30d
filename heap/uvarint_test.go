package heap

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// uvarintAt agrees with encoding/binary on every length and on the edges
// of the buffer.
func TestUvarintAt(t *testing.T) {
	vals := []uint64{0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 1<<56 - 1, 1 << 56, 1<<63 - 1, math.MaxUint64}
	for i := 0; i < 1000; i++ {
		vals = append(vals, rand.Uint64()>>rand.IntN(64))
	}
	for _, v := range vals {
		enc := binary.AppendUvarint(nil, v)
		for pad := 0; pad < 10; pad++ {
			b := append(append([]byte{0xff}, enc...), make([]byte, pad)...)
			got, next := uvarintAt(b, 1)
			if got != v || next != 1+len(enc) {
				t.Fatalf("uvarintAt(% x) = %d, %d; want %d, %d", b, got, next, v, 1+len(enc))
			}
			if _, next := uvarintAt(b[:len(enc)], 1); next != -1 {
				t.Fatalf("uvarintAt of a cut varint % x did not fail", b[:len(enc)])
			}
		}
	}
	// Too long or overflowing.
	for _, b := range [][]byte{
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},
	} {
		if _, next := uvarintAt(b, 0); next != -1 {
			t.Errorf("uvarintAt(% x) did not fail", b)
		}
	}
}
