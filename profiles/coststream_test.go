package profiles

import (
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"strconv"
	"testing"
)

// streamCost feeds raw to a costStream as readLimited would, in pieces of
// size bytes (the last shorter), each read in steps of random length,
// and returns the stream's result.
func streamCost(raw []byte, size int, limit int64, rng *rand.Rand) (int64, bool) {
	s := startCostStream(limit)
	for off := 0; off < len(raw) || off == 0; off += size {
		piece := make([]byte, size)
		s.begin(piece)
		n := copy(piece, raw[off:])
		for got := 0; got < n; {
			got = min(n, got+1+rng.IntN(size))
			s.grew(got)
		}
	}
	s.end(true)
	return s.result()
}

// checkStreamCost checks costStream on raw against protoCost, in pieces of
// a few sizes: a stream that walked it all must agree with protoCost, and
// one whose pieces hold its longest top-level field, when it can carry
// that, must walk what protoCost takes whole within the limit.
func checkStreamCost(t testing.TB, raw []byte, limit int64, rng *rand.Rand) {
	t.Helper()
	wantCost, wantOK := protoCost(raw, limit)
	wantWhole := wantOK && wantCost <= limit
	longest := 1
	for b := raw; len(b) > 0; {
		rest := b
		if _, ok := nextField(&rest); !ok {
			break
		}
		longest = max(longest, len(b)-len(rest))
		b = rest
	}
	for _, size := range []int{1 + rng.IntN(64), 1 + rng.IntN(4096), longest, longest + rng.IntN(64), carryMax, max(len(raw), 1)} {
		cost, whole := streamCost(raw, size, limit, rng)
		if whole && (!wantWhole || cost != wantCost) {
			t.Fatalf("pieces of %d bytes: the stream walked it all, cost %d; protoCost: %d, ok %v (limit %d)",
				size, cost, wantCost, wantOK, limit)
		}
		if !whole && wantWhole && size >= longest && longest <= carryMax {
			t.Fatalf("pieces of %d bytes: the stream gave up on a message protoCost walks (cost %d)", size, wantCost)
		}
	}
}

// The stream's walk agrees with protoCost on real and crafted profiles,
// whole and cut, whatever the pieces, and gives up past its limit.
func TestCostStreamAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	inputs := realProfiles(t)
	inputs["crafted"] = craftedProfile(t)
	for name, raw := range inputs {
		t.Run(name, func(t *testing.T) {
			checkStreamCost(t, raw, 1<<62, rng)
			cost, _ := protoCost(raw, 1<<62)
			checkStreamCost(t, raw, cost-1, rng) // over the limit: given up
			for range 20 {
				checkStreamCost(t, raw[:rng.IntN(len(raw))], 1<<62, rng)
			}
		})
	}
}

// A reading that fails stops the walk, which then says it did not walk
// the message, whatever it read.
func TestCostStreamQuits(t *testing.T) {
	raw := craftedProfile(t)
	s := startCostStream(1 << 62)
	s.begin(raw)
	s.grew(len(raw))
	s.end(false)
	if _, whole := s.result(); whole {
		t.Error("the walk of a failed reading is taken as whole")
	}
}

// gunzip walks a profile of several pieces (more than untrustedHint
// bytes) as it decompresses it, to the cost protoCost gives.
func TestGunzipWalksAsItReads(t *testing.T) {
	p := appendField(profileHead(), 4, []byte{0x08, 1}) // location 1
	for i := 0; len(p) < untrustedHint+untrustedHint/4; i++ {
		p = appendField(p, 2, []byte{0x0a, 1, 1, 0x12, 2, byte(i & 0x7f), 1}) // location 1, values i%128 and 1
		p = appendField(p, 6, []byte(strconv.Itoa(i)))
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if _, err := w.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, s, err := gunzip("p.pb.gz", gz.Bytes(), DefaultMaxBytes, nil)
	if err != nil || !bytes.Equal(raw, p) {
		t.Fatalf("gunzip: %v, or other bytes", err)
	}
	wantCost, _ := protoCost(p, 1<<62)
	if cost, whole := s.result(); !whole || cost != wantCost {
		t.Errorf("walked whole %v, cost %d; protoCost: %d", whole, cost, wantCost)
	}
}
