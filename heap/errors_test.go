package heap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallDump returns a small real dump and its records.
func smallDump(t *testing.T) ([]byte, []rawRecord) {
	t.Helper()
	b := progDump(t, "-small").bytes(t)
	recs, err := walkDump(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, recs
}

// firstRecord returns the first record with the tag, and its index.
func firstRecord(t *testing.T, recs []rawRecord, tag uint64) (rawRecord, int) {
	t.Helper()
	for i, r := range recs {
		if r.tag == tag {
			return r, i
		}
	}
	t.Fatalf("no record with tag %d", tag)
	return rawRecord{}, 0
}

// replace returns b with the record r replaced by the given bytes.
func replace(b []byte, r rawRecord, with []byte) []byte {
	return append(append(append([]byte(nil), b[:r.off]...), with...), b[r.end:]...)
}

// insertAt returns b with extra inserted at off.
func insertAt(b []byte, off int64, extra []byte) []byte {
	return append(append(append([]byte(nil), b[:off]...), extra...), b[off:]...)
}

// enc encodes uvarints, for computing offsets of fields in crafted records.
func enc(vs ...uint64) []byte { return newEncoder().u(vs...).b[len(header):] }

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
	objAddr := obj.fields[0].u
	objContents := obj.fields[1].s

	// objectWith re-encodes the first object record with other fields.
	objectWith := func(addr uint64, contents []byte, lenOverride uint64, fields []uint64, kind uint64) []byte {
		e := &encoder{}
		e.u(tagObject, addr)
		if lenOverride != 0 {
			e.u(lenOverride)
			e.b = append(e.b, contents...)
		} else {
			e.s(contents)
		}
		for _, f := range fields {
			e.u(kind, f)
		}
		return e.u(fieldKindEol).b
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
		{"unknown tag", replace(orig, obj, append([]byte{99}, orig[obj.off+1:obj.end]...)), obj.off, "dump", "unknown record tag 99"},
		{"contents past end of file", replace(orig, obj, objectWith(objAddr, objContents, 1<<40, nil, 1)),
			obj.off + int64(hdr), "object record", "contents length 1099511627776 past end of file"},
		{"unknown field kind", replace(orig, obj, objectWith(objAddr, objContents, 0, []uint64{0}, 2)),
			obj.off + int64(hdr) + int64(len(enc(uint64(len(objContents))))) + int64(len(objContents)), "object record", "field kind 2"},
		{"field past contents", replace(orig, obj, objectWith(objAddr, objContents, 0, []uint64{uint64(len(objContents))}, 1)),
			obj.off + int64(hdr) + int64(len(enc(uint64(len(objContents))))) + int64(len(objContents)) + 1, "object record", "past the end"},
		{"fields out of order", replace(orig, obj, objectWith(objAddr, objContents, 0, []uint64{8, 0}, 1)),
			obj.off + int64(hdr) + int64(len(enc(uint64(len(objContents))))) + int64(len(objContents)) + 3, "object record", "does not follow"},
		{"misaligned object", replace(orig, obj, objectWith(objAddr+1, objContents, 0, nil, 1)), obj.off + 1, "object record", "not pointer-aligned"},
		{"object outside the arenas", replace(orig, obj, objectWith(8, objContents, 0, nil, 1)), obj.off + 1, "object record", "outside the heap arenas"},
		{"zero-size object", replace(orig, obj, objectWith(objAddr, nil, 0, nil, 1)), obj.off + int64(hdr), "object record", "not a positive multiple"},
		{"overlapping objects", insertAt(orig, obj.end, objectWith(objAddr+8, objContents, 0, nil, 1)), obj.end, "object record", "overlaps"},
		{"object before params", insertAt(orig, params.off, orig[obj.off:obj.end]), params.off, "object record", "before the params record"},
		{"second params", insertAt(orig, obj.off, orig[params.off:params.end]), obj.off, "params record", "second params record"},
		{"pointer size 3", replace(orig, params, append(enc(tagParams, 0, 3), orig[params.fields[2].off:params.end]...)),
			params.off + 2, "params record", "pointer size 3"},
		{"bad bool", replace(orig, gor, func() []byte {
			e := &encoder{}
			e.u(tagGoroutine)
			for i, f := range gor.fields {
				switch {
				case i == 5: // isSystem
					e.u(7)
				case i == 8:
					e.s(f.s)
				default:
					e.u(f.u)
				}
			}
			return e.b
		}()), gor.fields[5].off, "goroutine record", "boolean value 7"},
		{"frame without goroutine", insertAt(orig, obj.off, orig[frame.off:frame.end]), obj.off, "stack frame record", "does not follow a goroutine"},
		{"frame depth", insertAt(orig, frame.end, orig[frame.off:frame.end]), frame.end + int64(frame.fields[1].off-frame.off), "stack frame record", "frame depth 0, want 1"},
		{"varint overflow", insertAt(orig, obj.off, bytes.Repeat([]byte{0xff}, 11)), obj.off, "dump", "varint overflows 64 bits"},
		{"string past end", insertAt(orig, obj.off, append(enc(tagOtherRoot), enc(1<<30)...)), obj.off + 1, "other root record", "description length 1073741824 past end of file"},
		{"data after the end", append(append([]byte(nil), orig...), 0, 0), int64(len(orig)), "end-of-dump record", "2 bytes after the end-of-dump record"},
		{"no end record", orig[:recs[len(recs)-1].off], recs[len(recs)-1].off, "dump", "no end-of-dump record"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readBytes(tc.data)
			// The same with a goroutine reading ahead, as for large files.
			withPrefetch(func() {
				if _, err2 := readBytes(tc.data); fmt.Sprint(err2) != fmt.Sprint(err) {
					t.Errorf("with read-ahead: %v\nwithout: %v", err2, err)
				}
			})
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
		if seen[r.tag] < 3 || i%100 == 0 {
			cuts = append(cuts, r.off, r.off+1, (r.off+r.end)/2, r.end-1)
		}
		seen[r.tag]++
	}
	for _, cut := range cuts {
		if cut <= 0 || cut >= int64(len(orig)) {
			continue
		}
		_, err := readBytes(orig[:cut])
		withPrefetch(func() {
			if _, err2 := readBytes(orig[:cut]); fmt.Sprint(err2) != fmt.Sprint(err) {
				t.Errorf("cut at %d with read-ahead: %v\nwithout: %v", cut, err2, err)
			}
		})
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("cut at %d: error %v, want a *FormatError", cut, err)
		}
		// The record that holds the cut.
		var in rawRecord
		for _, r := range recs {
			if r.off <= cut && cut < r.end {
				in = r
			}
		}
		if cut == in.off {
			if fe.Offset != cut || fe.Record != "dump" || !strings.Contains(fe.Msg, "no end-of-dump record") {
				t.Errorf("cut at record boundary %d: %v", cut, err)
			}
			continue
		}
		// "unexpected end of file", or a string or contents length "past
		// end of file".
		if fe.Offset < in.off || fe.Offset > cut || fe.Record != recordNames[in.tag] || !strings.Contains(fe.Msg, "end of file") {
			t.Errorf("cut at %d in a %s at %d: %v", cut, recordNames[in.tag], in.off, err)
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

// withPrefetch runs f with read-ahead on for files of any size.
func withPrefetch(f func()) {
	defer func(p int64) { prefetchMin = p }(prefetchMin)
	prefetchMin = 0
	f()
}
