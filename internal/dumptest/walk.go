package dumptest

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Record tags and field kinds, as in src/runtime/heapdump.go: written out
// again here, apart from the reader's, so that the walker stays an
// independent reading of the format.
const (
	tagEOF = iota
	tagObject
	tagOtherRoot
	tagType
	tagGoroutine
	tagStackFrame
	tagParams
	tagFinalizer
	tagItab
	tagOSThread
	tagMemStats
	tagQueuedFinalizer
	tagData
	tagBSS
	tagDefer
	tagPanic
	tagMemProf
	tagAllocSample

	fieldKindEol = 0
	fieldKindPtr = 1
)

// Header is the first line of every dump.
const Header = "go1.7 heap dump\n"

// The walker is a second, independent reading of the dump format for the
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

// Record is a record as the walker sees it.
type Record struct {
	Tag    uint64
	Off    int64 // offset of the tag
	End    int64 // offset after the record
	Fields []Field
}

// Field is one field of a record: its offset and value (for a string
// or contents: the offset of the length and the bytes after it).
type Field struct {
	Off   int64
	U     uint64
	S     []byte
	Ptrs  []uint64 // field list offsets
	Stack [][3]any // memprof frames: func, file, line
}

// Walk splits dump b into records by their shape alone.
func Walk(b []byte) ([]Record, error) {
	if len(b) < len(Header) || string(b[:len(Header)]) != Header {
		return nil, fmt.Errorf("no header")
	}
	pos := len(Header)
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
	var recs []Record
	for {
		rec := Record{Off: int64(pos)}
		tag, err := uv()
		if err != nil {
			return nil, err
		}
		shape, ok := recordShapes[tag]
		if !ok {
			return nil, fmt.Errorf("unknown tag %d at %d", tag, rec.Off)
		}
		rec.Tag = tag
		for _, c := range shape {
			f := Field{Off: int64(pos)}
			switch c {
			case 'u':
				f.U, err = uv()
			case 's':
				f.S, err = str()
			case 'f':
				for err == nil {
					var kind uint64
					if kind, err = uv(); err != nil || kind == 0 {
						break
					}
					var o uint64
					o, err = uv()
					f.Ptrs = append(f.Ptrs, o)
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
					f.Stack = append(f.Stack, [3]any{string(fn), string(file), line})
				}
			}
			if err != nil {
				return nil, err
			}
			rec.Fields = append(rec.Fields, f)
		}
		rec.End = int64(pos)
		recs = append(recs, rec)
		if tag == tagEOF {
			return recs, nil
		}
	}
}

// Encoder writes dump records into B.
type Encoder struct{ B []byte }

// NewEncoder returns an Encoder holding the dump header.
func NewEncoder() *Encoder { return &Encoder{B: []byte(Header)} }

// U appends uvarints.
func (e *Encoder) U(vs ...uint64) *Encoder {
	for _, v := range vs {
		e.B = binary.AppendUvarint(e.B, v)
	}
	return e
}

// S appends a length-prefixed string.
func (e *Encoder) S(s []byte) *Encoder {
	e.U(uint64(len(s)))
	e.B = append(e.B, s...)
	return e
}

// Fields appends a field list of pointer offsets.
func (e *Encoder) Fields(offs []uint64) *Encoder {
	for _, o := range offs {
		e.U(fieldKindPtr, o)
	}
	return e.U(fieldKindEol)
}

// Record re-encodes a walked record.
func (e *Encoder) Record(r Record) *Encoder {
	e.U(r.Tag)
	for i, c := range recordShapes[r.Tag] {
		f := r.Fields[i]
		switch c {
		case 'u':
			e.U(f.U)
		case 's':
			e.S(f.S)
		case 'f':
			e.Fields(f.Ptrs)
		case 'k':
			e.U(uint64(len(f.Stack)))
			for _, fr := range f.Stack {
				e.S([]byte(fr[0].(string))).S([]byte(fr[1].(string))).U(fr[2].(uint64))
			}
		}
	}
	return e
}
