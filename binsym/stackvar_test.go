package binsym

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
)

// Location lists as the Go linker writes them (DWARF 5 and 4), and broken
// ones: only a list whose every location is fbreg at the offset matches.
func TestLocationLists(t *testing.T) {
	const off = -72
	fb := []byte{opFbreg, 0xb8, 0x7f} // sleb128 -72
	if v, n := sleb(fb[1:]); v != off || n != 2 {
		t.Fatalf("sleb128 %x: %d (%d bytes), want %d", fb[1:], v, n, off)
	}
	expr := func(e []byte) []byte { return append([]byte{byte(len(e))}, e...) }
	one := append(append([]byte{lleBaseAddrx, 0x0a, lleOffsetPair, 0x17, 0x7f}, expr(fb)...), lleEnd)
	reg := append(append([]byte{lleOffsetPair, 0, 0x17}, expr([]byte{0x50})...), one[2:]...) // DW_OP_reg0 first
	for _, tt := range []struct {
		name string
		list []byte
		want bool
	}{
		{"fbreg", one, true},
		{"another offset", append(append([]byte{lleOffsetPair, 0x17, 0x7f}, expr([]byte{opFbreg, 0x40})...), lleEnd), false},
		{"register part of the time", reg, false},
		{"empty", []byte{lleEnd}, false},
		{"truncated", one[:len(one)-1], false},
		{"expression past the end", []byte{lleOffsetPair, 1, 2, 0x7f}, false},
		{"unknown entry", []byte{0x20}, false},
		{"start_end", append(append(append([]byte{lleStartEnd}, make([]byte, 16)...), expr(fb)...), lleEnd), true},
		{"start_length", append(append(append([]byte{lleStartLen}, make([]byte, 8)...), append([]byte{5}, expr(fb)...)...), lleEnd), true},
		{"trailing bytes in the expression", append(append([]byte{lleDefault}, expr(append(fb, 0x9f))...), lleEnd), false},
	} {
		if got := allFbreg5(tt.list, 0, off); got != tt.want {
			t.Errorf("DWARF 5 %s (% x): %v, want %v", tt.name, tt.list, got, tt.want)
		}
	}
	if allFbreg5(one, uint64(len(one)), off) || allFbreg5(one, 1<<62, off) {
		t.Error("DWARF 5: an offset past the section matched")
	}

	le := binary.LittleEndian
	var v4 []byte
	v4 = le.AppendUint64(le.AppendUint64(v4, ^uint64(0)), 0x401000) // base address
	v4 = le.AppendUint64(le.AppendUint64(v4, 0x17), 0x7f)
	v4 = append(le.AppendUint16(v4, uint16(len(fb))), fb...)
	v4 = append(v4, make([]byte, 16)...)
	if !allFbreg4(v4, 0, off) {
		t.Errorf("DWARF 4 list % x did not match", v4)
	}
	for _, n := range []int{0, 8, 16, 31, 33, 34, len(v4) - 1} {
		if allFbreg4(v4[:n], 0, off) {
			t.Errorf("DWARF 4 list cut to %d bytes matched", n)
		}
	}
	if allFbreg4(v4, 1<<63, off) {
		t.Error("DWARF 4: an offset past the section matched")
	}
}

// Stack-object records that the executable does not back are refused, with
// the function named; those read before the bad one are kept.
func TestStackObjectsCorrupt(t *testing.T) {
	data, err := os.ReadFile(TestExe)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBinary("prog", bytes.NewReader(data), int64(len(data)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	off, ok := stackObjectsFileOffset(b, "main.addrTaken")
	if !ok {
		t.Fatal("no stack objects of main.addrTaken")
	}
	le := binary.LittleEndian
	for _, tt := range []struct {
		name  string
		field uint64 // offset from the count
		value uint32
		want  string
	}{
		{"huge count", 0, 1 << 31, "records, more than"},
		{"count past the file", 0, maxStackObjects, "records not in the file"},
		{"negative size", 12, 0xffffffff, "size -1"},
		{"pointers past the size", 16, 64, "64 pointer bytes in 32"},
		{"mask past the file", 20, 0x7fffffff, "pointer mask of 4 bits not in the file"},
	} {
		d := bytes.Clone(data)
		le.PutUint32(d[off+tt.field:], tt.value)
		b, err := newBinary("prog", bytes.NewReader(d), int64(len(d)), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		fn, _ := b.FuncByName("main.addrTaken")
		objs, err := b.StackObjects(fn.Entry)
		var se *StackObjectError
		if !errors.As(err, &se) || se.Func != "main.addrTaken" || !strings.Contains(err.Error(), tt.want) || len(objs) != 0 {
			t.Errorf("%s: %d objects, error %v; want none and %q", tt.name, len(objs), err, tt.want)
		}
	}
}

// FuzzLocationList reads any bytes as DWARF 5 and DWARF 4 location lists:
// no panic, no endless loop.
//
//	go test -run '^$' -fuzz FuzzLocationList ./binsym
func FuzzLocationList(f *testing.F) {
	f.Add([]byte{lleBaseAddrx, 0x0a, lleOffsetPair, 0x17, 0x7f, 3, opFbreg, 0xb8, 0x7f, lleEnd}, uint16(0))
	f.Add([]byte{lleStartLen, 0, 0, 0, 0, 0, 0, 0, 0, 5, 2, opFbreg, 0x40, lleEnd}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, off uint16) {
		allFbreg5(data, uint64(off), -72)
		allFbreg4(data, uint64(off), -72)
		fbreg(data, 8)
		if expr, ok := locList5At(data, uint64(off), 0x1000, 0x1020); ok {
			pieceAt(expr, -72, 16)
		}
		pieceAt(data, -72, -1)
		onStackNear(data, -72)
	})
}
