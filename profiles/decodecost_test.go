package profiles

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/google/pprof/profile"
)

// appendField appends to b field num of a protobuf message, length
// delimited, with body.
func appendField(b []byte, num int, body []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num<<3|2))
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

// profileHead returns the fields the crafted profiles start with: a sample
// type of strings 1 and 2, the strings "", "a" and "b", and function 1.
func profileHead() []byte {
	p := appendField(nil, 1, []byte{0x08, 1, 0x10, 2}) // sample type: strings 1, 2
	for _, s := range []string{"", "a", "b"} {
		p = appendField(p, 6, []byte(s))
	}
	return appendField(p, 5, []byte{0x08, 1, 0x10, 1}) // function 1
}

// The decode cost estimate covers what decoding allocates for the records
// a crafted profile repeats: labels, lines, samples, locations, functions
// and strings, 100,000 of each. An estimate below the real allocation lets
// a small profile take more memory than the cap (16M lines in a 100 MB
// profile took 2.4 GB with the old costLine of 64).
func TestDecodeCostCoversAllocation(t *testing.T) {
	const n = 100_000
	sample := []byte{0x0a, 1, 1, 0x12, 1, 1} // location 1, value 1
	repeat := func(num int, body func(i int) []byte) []byte {
		var b []byte
		for i := range n {
			b = appendField(b, num, body(i))
		}
		return b
	}
	id := func(i int) []byte { return binary.AppendUvarint([]byte{0x08}, uint64(i+2)) }
	for _, tt := range []struct {
		what string
		body []byte // fields after the sample type and strings
	}{
		{"labels", appendField(nil, 2, append(sample, repeat(3, func(int) []byte { return []byte{0x08, 1, 0x10, 2} })...))},
		{"numeric labels", appendField(nil, 2, append(sample, repeat(3, func(int) []byte { return []byte{0x08, 1, 0x18, 2} })...))},
		{"lines", appendField(nil, 4, append([]byte{0x08, 1}, repeat(4, func(int) []byte { return []byte{0x08, 1, 0x10, 1} })...))},
		{"samples", repeat(2, func(int) []byte { return sample })},
		{"locations", repeat(4, id)},
		{"functions", repeat(5, func(i int) []byte { return append(id(i), 0x10, 1) })},
		{"strings", repeat(6, func(int) []byte { return []byte("x") })},
	} {
		p := appendField(profileHead(), 4, []byte{0x08, 1}) // location 1
		p = append(p, tt.body...)
		cost, ok := protoCost(p, 1<<40)
		if !ok {
			t.Fatalf("%s: not a proto", tt.what)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		prof, err := profile.ParseUncompressed(p)
		if err != nil {
			t.Fatalf("%s: %v", tt.what, err)
		}
		escapeText(prof)
		runtime.ReadMemStats(&after)
		alloc := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("%s: decoding allocated %d bytes per record; the estimate is %d", tt.what, alloc/n, cost/n)
		if alloc > cost*11/10 {
			t.Errorf("%s: decoding allocated %d bytes, %d per record; the estimate is %d, %d per record", tt.what, alloc, alloc/n, cost, cost/n)
		}
	}
}

// TestDecodeCostLongLocation checks that a location's lines past the
// first longLines are charged as they cost: a million lines in one
// location, which the decoder grows one slice for, are refused where the
// same lines over a thousand locations are read.
func TestDecodeCostLongLocation(t *testing.T) {
	const lines = 1_000_000
	profile := func(locations int) []byte {
		p := profileHead()
		line := appendField(nil, 4, []byte{0x08, 1, 0x10, 1})
		for l := range locations {
			loc := binary.AppendUvarint([]byte{0x08}, uint64(l+1))
			for range lines / locations {
				loc = append(loc, line...)
			}
			p = appendField(p, 4, loc)
		}
		return p
	}
	one, spread := profile(1), profile(1000)
	costOne, _ := protoCost(one, 1<<40)
	costSpread, _ := protoCost(spread, 1<<40)
	if want := int64(longLines*costLine + (lines-longLines)*costLongLine); costOne < want {
		t.Errorf("one location of %d lines: estimate %d, want at least %d", lines, costOne, want)
	}
	if costSpread > lines*costLine+1000*(costLocation+costOther)+1<<10 {
		t.Errorf("%d lines over 1,000 locations: estimate %d, more than their lines and locations", lines, costSpread)
	}
	if _, err := checkDecodeCost(spread, int64(len(spread)), DefaultMaxBytes, 0, nil); err != nil {
		t.Errorf("%d lines over 1,000 locations (%d bytes): %v", lines, len(spread), err)
	}
	var le *LimitError
	if _, err := checkDecodeCost(one, int64(len(one)), DefaultMaxBytes, 0, nil); !errors.As(err, &le) || le.Limit != LimitDecoded {
		t.Errorf("one location of %d lines (%d bytes): %v, want a %s limit error", lines, len(one), err, LimitDecoded)
	}
}
