package heap

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// This file is a second, independent reading of the dump format for the
// tests: a walker that splits a dump into records by their shape alone,
// and an encoder that writes records back. Tests use it to find record
// boundaries to cut and corrupt, to cross-check the parser, and to build
// small fuzz seeds and synthetic dumps.

// recordShapes gives each tag's fields: u a uvarint, s a length-prefixed
// string, f a field list, k a memprof stack. From src/runtime/heapdump.go.
var recordShapes = map[uint64]string{
	tagEOF:             "",
	tagObject:          "usf",
	tagOtherRoot:       "su",
	tagType:            "uusu",
	tagGoroutine:       "uuuuuuuusuuuu",
	tagStackFrame:      "uuusuuusf",
	tagParams:          "uuuussu",
	tagFinalizer:       "uuuuu",
	tagItab:            "uu",
	tagOSThread:        "uuu",
	tagMemStats:        string(slices.Repeat([]byte{'u'}, 24+256+1)),
	tagQueuedFinalizer: "uuuuu",
	tagData:            "usf",
	tagBSS:             "usf",
	tagDefer:           "uuuuuuu",
	tagPanic:           "uuuuuu",
	tagMemProf:         "uukuu",
	tagAllocSample:     "uu",
}

// rawRecord is a record as the walker sees it.
type rawRecord struct {
	tag    uint64
	off    int64 // offset of the tag
	end    int64 // offset after the record
	fields []rawField
}

// rawField is one field of a record: its offset and value (for a string
// or contents: the offset of the length and the bytes after it).
type rawField struct {
	off   int64
	u     uint64
	s     []byte
	ptrs  []uint64 // field list offsets
	stack [][3]any // memprof frames: func, file, line
}

func walkDump(b []byte) ([]rawRecord, error) {
	if len(b) < len(header) || string(b[:len(header)]) != header {
		return nil, fmt.Errorf("no header")
	}
	pos := len(header)
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 {
			return 0, fmt.Errorf("bad varint at %d", pos)
		}
		pos += n
		return v, nil
	}
	str := func() ([]byte, error) {
		n, err := uv()
		if err != nil || n > uint64(len(b)-pos) {
			return nil, fmt.Errorf("bad string at %d", pos)
		}
		s := b[pos : pos+int(n)]
		pos += int(n)
		return s, nil
	}
	var recs []rawRecord
	for {
		rec := rawRecord{off: int64(pos)}
		tag, err := uv()
		if err != nil {
			return nil, err
		}
		shape, ok := recordShapes[tag]
		if !ok {
			return nil, fmt.Errorf("unknown tag %d at %d", tag, rec.off)
		}
		rec.tag = tag
		for _, c := range shape {
			f := rawField{off: int64(pos)}
			switch c {
			case 'u':
				f.u, err = uv()
			case 's':
				f.s, err = str()
			case 'f':
				for err == nil {
					var kind uint64
					if kind, err = uv(); err != nil || kind == 0 {
						break
					}
					var o uint64
					o, err = uv()
					f.ptrs = append(f.ptrs, o)
				}
			case 'k':
				var n uint64
				n, err = uv()
				for i := uint64(0); i < n && err == nil; i++ {
					var fn, file []byte
					var line uint64
					if fn, err = str(); err == nil {
						if file, err = str(); err == nil {
							line, err = uv()
						}
					}
					f.stack = append(f.stack, [3]any{string(fn), string(file), line})
				}
			}
			if err != nil {
				return nil, err
			}
			rec.fields = append(rec.fields, f)
		}
		rec.end = int64(pos)
		recs = append(recs, rec)
		if tag == tagEOF {
			return recs, nil
		}
	}
}

// encoder writes dump records.
type encoder struct{ b []byte }

func newEncoder() *encoder { return &encoder{b: []byte(header)} }

func (e *encoder) u(vs ...uint64) *encoder {
	for _, v := range vs {
		e.b = binary.AppendUvarint(e.b, v)
	}
	return e
}

func (e *encoder) s(s []byte) *encoder {
	e.u(uint64(len(s)))
	e.b = append(e.b, s...)
	return e
}

func (e *encoder) fields(offs []uint64) *encoder {
	for _, o := range offs {
		e.u(fieldKindPtr, o)
	}
	return e.u(fieldKindEol)
}

// record re-encodes a walked record.
func (e *encoder) record(r rawRecord) *encoder {
	e.u(r.tag)
	for i, c := range recordShapes[r.tag] {
		f := r.fields[i]
		switch c {
		case 'u':
			e.u(f.u)
		case 's':
			e.s(f.s)
		case 'f':
			e.fields(f.ptrs)
		case 'k':
			e.u(uint64(len(f.stack)))
			for _, fr := range f.stack {
				e.s([]byte(fr[0].(string))).s([]byte(fr[1].(string))).u(fr[2].(uint64))
			}
		}
	}
	return e
}
