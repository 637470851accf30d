package heapdump

import (
	"encoding/binary"
	"math"
	"math/bits"
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

// The lookup divides by multiplying with ^uint64(0)/size + 1; that is exact
// for offsets below 2^32.
func TestMagicDivision(t *testing.T) {
	sizes := []uint64{4, 8, 16, 24, 48, 80, 112, 144, 208, 288, 416, 576, 1152, 1792, 3072, 4864, 6528, 9472, 10240, 13568, 18432, 27264, 32768, 1<<32 - 8}
	for i := 0; i < 100; i++ {
		sizes = append(sizes, 8*(1+rand.Uint64N(1<<29)))
	}
	for _, s := range sizes {
		m := ^uint64(0)/s + 1
		offs := []uint64{0, s - 1, s, 2*s - 1, 1<<32 - 1, 1<<32 - 1 - (1<<32-1)%s, 1<<32 - 2 - (1<<32-1)%s}
		for i := 0; i < 1000; i++ {
			offs = append(offs, rand.Uint64N(1<<32))
		}
		for _, off := range offs {
			if off >= 1<<32 {
				continue
			}
			if got, _ := bits.Mul64(off, m); got != off/s {
				t.Fatalf("size %d, offset %d: %d, want %d", s, off, got, off/s)
			}
		}
	}
}
