package heapdump

import (
	"fmt"
	"io"
)

// Contents are the bytes of one record of the dump, an object's, a stack
// frame's or a data or bss segment's, where they are in the file: the
// parser gives them a length it checked against the file, and keeps only
// where they start. Every read of them after parsing goes through
// Contents, checked against that length: a word, or at most MaxRead bytes
// at a time, so nothing allocates from a length the dump claims.
type Contents struct {
	src *source
	off int64 // file offset of the first byte
	n   int64
}

// MaxRead is the most Contents.ReadAt copies at once.
const MaxRead = 64 << 10

// source is the file Contents read, as the parser read it.
type source struct {
	ra    io.ReaderAt
	path  string
	size  int64
	words wordDecoder
}

// Len returns the number of bytes of the contents.
func (c Contents) Len() int64 { return c.n }

// ReadAt copies the len(p) bytes at offset off of the contents into p. It
// fails when p is longer than MaxRead, when the bytes are not all in the
// contents, or when the file cannot be read (it shrank), naming the file
// and offset.
func (c Contents) ReadAt(p []byte, off int64) error {
	if c.src == nil {
		return fmt.Errorf("heapdump: reading contents that no dump gave")
	}
	r := reader{ra: c.src.ra, path: c.src.path, size: c.src.size, pin: -1, rec: "contents"}
	if len(p) > MaxRead {
		return r.errorf(c.off, "reading %d bytes at once, more than %d", len(p), MaxRead)
	}
	if off < 0 || off > c.n-int64(len(p)) || c.off+c.n > c.src.size {
		return r.errorf(c.off, "bytes [%d, +%d) outside the %d bytes of contents", off, len(p), c.n)
	}
	return r.readAt(p, c.off+off)
}

// Word returns the pointer-sized word at offset off of the contents, in
// the dump's byte order. It returns 0 when the word is not all in the
// contents, the file cannot be read, or the dump gave no pointer size.
func (c Contents) Word(off int64) uint64 {
	if c.src == nil || c.src.words.size == 0 {
		return 0
	}
	var b [8]byte
	w := b[:c.src.words.size]
	if c.ReadAt(w, off) != nil {
		return 0
	}
	return c.src.words.word(w, 0)
}

// words returns the words at offs, which are ascending and each a whole
// word inside the contents, reading the file forward through one window
// of at most MaxRead bytes.
func (c Contents) words(offs []uint64) ([]uint64, error) {
	if len(offs) == 0 {
		return nil, nil
	}
	ps := c.src.words.size
	out := make([]uint64, len(offs))
	win := make([]byte, min(MaxRead, c.n))
	from, n := int64(-1), int64(0)
	for i, o := range offs {
		at := int64(o)
		if from < 0 || at < from || at+ps > from+n {
			from, n = at, min(int64(len(win)), c.n-at)
			if err := c.ReadAt(win[:n], from); err != nil {
				return nil, err
			}
		}
		out[i] = c.src.words.word(win[:n], at-from)
	}
	return out, nil
}
