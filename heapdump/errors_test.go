package heapdump

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// smallDump returns a small real dump and its records.
func smallDump(t *testing.T) ([]byte, []dumptest.Record) {
	t.Helper()
	b := progDump(t, "-small").bytes(t)
	recs, err := dumptest.Walk(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, recs
}

// firstRecord returns the first record with the tag, and its index.
func firstRecord(t *testing.T, recs []dumptest.Record, tag uint64) (dumptest.Record, int) {
	t.Helper()
	for i, r := range recs {
		if r.Tag == tag {
			return r, i
		}
	}
	t.Fatalf("no record with tag %d", tag)
	return dumptest.Record{}, 0
}

// replace returns b with the record r replaced by the given bytes.
func replace(b []byte, r dumptest.Record, with []byte) []byte {
	return append(append(append([]byte(nil), b[:r.Off]...), with...), b[r.End:]...)
}

// insertAt returns b with extra inserted at off.
func insertAt(b []byte, off int64, extra []byte) []byte {
	return append(append(append([]byte(nil), b[:off]...), extra...), b[off:]...)
}

// enc encodes uvarints, for computing offsets of fields in crafted records.
func enc(vs ...uint64) []byte { return dumptest.NewEncoder().U(vs...).B[len(dumptest.Header):] }

func readBytes(b []byte) (*Graph, error) {
	return Read(bytes.NewReader(b), int64(len(b)), "dump.bin", Options{})
}

// Malformed dumps, made by cutting, flipping and splicing a real one, give
// a *FormatError naming the offset of the bad value and the record kind.
func TestMalformed(t *testing.T) {
	orig, recs := smallDump(t)
	obj, _ := firstRecord(t, recs, tagObject)
	params, _ := firstRecord(t, recs, tagParams)
	gor, gi := firstRecord(t, recs, tagGoroutine)
	frame := recs[gi+1]
	objAddr := obj.Fields[0].U
	objContents := obj.Fields[1].S

	// objectWith re-encodes the first object record with other fields.
	objectWith := func(addr uint64, contents []byte, lenOverride uint64, fields []uint64, kind uint64) []byte {
		e := &dumptest.Encoder{}
		e.U(tagObject, addr)
		if lenOverride != 0 {
			e.U(lenOverride)
			e.B = append(e.B, contents...)
		} else {
			e.S(contents)
		}
		for _, f := range fields {
			e.U(kind, f)
		}
		return e.U(fieldKindEol).B
	}
	hdr := uint64(len(enc(tagObject, objAddr))) // offset of the length in an object record

	tests := []struct {
		name   string
		data   []byte
		offset int64
		record string
		msg    string
	}{
		{"not a dump", append([]byte("go1.6 heap dump\n"), orig[16:]...), 0, "dump", "not a Go heap dump"},
		{"empty", nil, 0, "dump", "not a Go heap dump"},
		{"unknown tag", replace(orig, obj, append([]byte{99}, orig[obj.Off+1:obj.End]...)), obj.Off, "dump", "unknown record tag 99"},
		{"contents past end of file", replace(orig, obj, objectWith(objAddr, objContents, 1<<40, nil, 1)),
			obj.Off + int64(hdr), "object record", "contents length 1099511627776 past end of file"},
		{"unknown field kind", replace(orig, obj, objectWith(objAddr, objContents, 0, []uint64{0}, 2)),
			obj.Off + int64(hdr) + int64(len(enc(uint64(len(objContents))))) + int64(len(objContents)), "object record", "field kind 2"},
		{"field past contents", replace(orig, obj, objectWith(objAddr, objContents, 0, []uint64{uint64(len(objContents))}, 1)),
			obj.Off + int64(hdr) + int64(len(enc(uint64(len(objContents))))) + int64(len(objContents)) + 1, "object record", "past the end"},
		{"fields out of order", replace(orig, obj, objectWith(objAddr, objContents, 0, []uint64{8, 0}, 1)),
			obj.Off + int64(hdr) + int64(len(enc(uint64(len(objContents))))) + int64(len(objContents)) + 3, "object record", "does not follow"},
		{"misaligned object", replace(orig, obj, objectWith(objAddr+1, objContents, 0, nil, 1)), obj.Off + 1, "object record", "not pointer-aligned"},
		{"object outside the arenas", replace(orig, obj, objectWith(8, objContents, 0, nil, 1)), obj.Off + 1, "object record", "outside the heap arenas"},
		{"zero-size object", replace(orig, obj, objectWith(objAddr, nil, 0, nil, 1)), obj.Off + int64(hdr), "object record", "not a positive multiple"},
		{"overlapping objects", insertAt(orig, obj.End, objectWith(objAddr+8, objContents, 0, nil, 1)), obj.End, "object record", "overlaps"},
		{"object before params", insertAt(orig, params.Off, orig[obj.Off:obj.End]), params.Off, "object record", "before the params record"},
		{"second params", insertAt(orig, obj.Off, orig[params.Off:params.End]), obj.Off, "params record", "second params record"},
		{"pointer size 3", replace(orig, params, append(enc(tagParams, 0, 3), orig[params.Fields[2].Off:params.End]...)),
			params.Off + 2, "params record", "pointer size 3"},
		{"bad bool", replace(orig, gor, func() []byte {
			e := &dumptest.Encoder{}
			e.U(tagGoroutine)
			for i, f := range gor.Fields {
				switch {
				case i == 5: // isSystem
					e.U(7)
				case i == 8:
					e.S(f.S)
				default:
					e.U(f.U)
				}
			}
			return e.B
		}()), gor.Fields[5].Off, "goroutine record", "boolean value 7"},
		{"frame without goroutine", insertAt(orig, obj.Off, orig[frame.Off:frame.End]), obj.Off, "stack frame record", "does not follow a goroutine"},
		{"frame depth", insertAt(orig, frame.End, orig[frame.Off:frame.End]), frame.End + int64(frame.Fields[1].Off-frame.Off), "stack frame record", "frame depth 0, want 1"},
		{"varint overflow", insertAt(orig, obj.Off, bytes.Repeat([]byte{0xff}, 11)), obj.Off, "dump", "varint overflows 64 bits"},
		{"string past end", insertAt(orig, obj.Off, append(enc(tagOtherRoot), enc(1<<30)...)), obj.Off + 1, "other root record", "description length 1073741824 past end of file"},
		{"data after the end", append(append([]byte(nil), orig...), 0, 0), int64(len(orig)), "end-of-dump record", "2 bytes after the end-of-dump record"},
		{"no end record", orig[:recs[len(recs)-1].Off], recs[len(recs)-1].Off, "dump", "no end-of-dump record"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readBytes(tc.data)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want a *FormatError", err)
			}
			if fe.Offset != tc.offset || fe.Record != tc.record || !strings.Contains(fe.Msg, tc.msg) || fe.Path != "dump.bin" {
				t.Errorf("got %q\nwant offset %d, record %q, message with %q", err, tc.offset, tc.record, tc.msg)
			}
			want := fmt.Sprintf("dump.bin: offset %d: %s: ", fe.Offset, fe.Record)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
		})
	}
}

// A dump cut anywhere fails with a truncation error inside the record that
// was cut, never a panic or a graph.
func TestTruncated(t *testing.T) {
	orig, recs := smallDump(t)
	var cuts []int64
	seen := map[uint64]int{}
	for i, r := range recs {
		// The first records of every kind and every 100th record: at the
		// tag, after it, in the middle and before the end.
		if seen[r.Tag] < 3 || i%100 == 0 {
			cuts = append(cuts, r.Off, r.Off+1, (r.Off+r.End)/2, r.End-1)
		}
		seen[r.Tag]++
	}
	for _, cut := range cuts {
		if cut <= 0 || cut >= int64(len(orig)) {
			continue
		}
		_, err := readBytes(orig[:cut])
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("cut at %d: error %v, want a *FormatError", cut, err)
		}
		// The record that holds the cut.
		var in dumptest.Record
		for _, r := range recs {
			if r.Off <= cut && cut < r.End {
				in = r
			}
		}
		if cut == in.Off {
			if fe.Offset != cut || fe.Record != "dump" || !strings.Contains(fe.Msg, "no end-of-dump record") {
				t.Errorf("cut at record boundary %d: %v", cut, err)
			}
			continue
		}
		// "unexpected end of file", or a string or contents length "past
		// end of file".
		if fe.Offset < in.Off || fe.Offset > cut || fe.Record != recordNames[in.Tag] || !strings.Contains(fe.Msg, "end of file") {
			t.Errorf("cut at %d in a %s at %d: %v", cut, recordNames[in.Tag], in.Off, err)
		}
	}
}

// A file that cannot be opened, or is not a regular file, is an error too.
func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "missing.bin"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load(t.TempDir(), Options{}); err == nil {
		t.Error("directory: no error")
	}
}
