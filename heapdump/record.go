package heapdump

import (
	"fmt"
	"sync"
)

// recordWindow is the number of bytes ObjectRecord.Word reads at once.
const recordWindow = MaxRead

// recordBufSize is the read buffer of ObjectRecord.
const recordBufSize = 16 << 10

// recordBufs recycles ObjectRecord's read buffers.
var recordBufs = sync.Pool{New: func() any { b := make([]byte, recordBufSize); return &b }}

// ObjectRecord is an object record read back from the file: the few objects
// on a holder path need their contents (interface type words, closure code
// pointers), which the graph does not keep.
type ObjectRecord struct {
	Addr       uint64
	Size       uint64
	Contents   []byte   // the first bytes, at most the limit (see Graph.ObjectRecord)
	PtrOffsets []uint64 // offsets of the pointer fields, ascending

	all  Contents // every byte, in the file: what Word reads past Contents
	win  []byte   // window of contents past Contents, read by Word
	wOff int64    // offset in the contents of win
}

// ObjectRecord re-reads the record of object v from the file. Its
// Contents are the first min(Size, limit) bytes, and limit is at most
// MaxRead (MaxRead when limit <= 0): an object may claim gigabytes, so the
// words past them are read with Word, and all of them through All. The
// graph keeps the file offset of every 32nd record, so this reads at most
// 32 records. It is safe for concurrent use.
func (g *Graph) ObjectRecord(v NodeID, limit int) (*ObjectRecord, error) {
	bp := recordBufs.Get().(*[]byte)
	defer recordBufs.Put(bp)
	return g.newCursor((*bp)[:min(recordBufSize, g.size+16)]).read(v, limit)
}

// RecordReader reads object records back from the file through one buffer
// it keeps from read to read: the records of objects whose ids are close,
// which lie near each other in the file, cost one read of it between them.
// Unlike Graph.ObjectRecord, a RecordReader is not safe for concurrent use.
type RecordReader struct{ c *recordCursor }

// RecordReader returns a reader of g's object records.
func (g *Graph) RecordReader() *RecordReader {
	return &RecordReader{c: g.newCursor(make([]byte, min(recordBufSize, g.size+16)))}
}

// ObjectRecord is Graph.ObjectRecord, read through r's buffer.
func (r *RecordReader) ObjectRecord(v NodeID, limit int) (*ObjectRecord, error) {
	return r.c.read(v, limit)
}

// ObjectWords calls fn with the pointer-sized word at offset off of the
// contents of each object of vs, which must be in increasing order (0 for an
// object too small to hold it), and stops at the first error, which it
// returns. It reads the file forward through one buffer, and keeps nothing
// of a record but that word: the labels of 100,000 goroutines' runtime.g
// cost one pass over their spans' records, with no allocation per record.
func (g *Graph) ObjectWords(vs []NodeID, off int64, fn func(v NodeID, word uint64) error) error {
	c := g.newCursor(make([]byte, min(objectWordsBufSize, g.size+16)))
	ps := g.words.size
	var word [8]byte
	for i, v := range vs {
		if i > 0 && v <= vs[i-1] {
			return fmt.Errorf("%s: ObjectWords: objects not in increasing order (%d after %d)", g.path, v, vs[i-1])
		}
		gi, _, n, err := c.find(v)
		if err != nil {
			return err
		}
		w := uint64(0)
		if ps > 0 && off >= 0 && off <= n-ps {
			if err := c.r.readAt(word[:ps], c.r.off()+off); err != nil {
				return err
			}
			w = g.words.word(word[:ps], 0)
		}
		if err := c.skipRest(gi, v, n); err != nil {
			return err
		}
		if err := fn(v, w); err != nil {
			return err
		}
	}
	return nil
}

// objectWordsBufSize is the read buffer of ObjectWords.
const objectWordsBufSize = 256 << 10

// recordCursor reads object records through one buffer. After a record,
// it stands at the next: a later object of the same group is reached by
// reading on, unless a mark (objIndex.recordAt) is nearer.
type recordCursor struct {
	g  *Graph
	r  *reader
	p  *parser
	gi int    // the group of the record the reader stands at, -1 for none
	k  uint32 // the object whose record the reader stands at
	// last is the group of the object read last: the next is often in it.
	last int
}

// newCursor returns a cursor reading through buf, which it does not keep
// past the caller's use.
func (g *Graph) newCursor(buf []byte) *recordCursor {
	r := &reader{ra: g.ra, path: g.path, size: g.size, buf: buf, pin: -1}
	return &recordCursor{
		g:  g,
		r:  r,
		p:  &parser{r: r, ptrSize: uint64(g.words.size), order: g.words.order, haveParams: true, wOff: -1},
		gi: -1,
	}
}

// read returns the record of object v (see Graph.ObjectRecord).
func (c *recordCursor) read(v NodeID, limit int) (*ObjectRecord, error) {
	gi, addr, n, err := c.find(v)
	if err != nil {
		return nil, err
	}
	rec := &ObjectRecord{Addr: addr, Size: uint64(n), all: Contents{src: c.g.src, off: c.r.off(), n: n}, wOff: -1}
	if limit <= 0 || limit > MaxRead {
		limit = MaxRead
	}
	rec.Contents = make([]byte, min(n, int64(limit)))
	if err := c.r.readAt(rec.Contents, rec.all.off); err != nil {
		return nil, err
	}
	if err := c.skipRest(gi, v, n); err != nil {
		return nil, err
	}
	rec.PtrOffsets = append([]uint64(nil), c.p.offs...)
	return rec, nil
}

// find moves the reader to the contents of object v's record, and returns
// v's group, its address and the length of its contents.
func (c *recordCursor) find(v NodeID) (gi int, addr uint64, n int64, err error) {
	g, r, p := c.g, c.r, c.p
	if int(v) >= g.numObjects {
		return 0, 0, 0, fmt.Errorf("%s: object %d out of range (%d objects)", g.path, v, g.numObjects)
	}
	i := uint32(v)
	gi = c.last
	if gr := &g.idx.groups[gi]; i < gr.first || i >= gr.first+gr.count {
		gi = g.idx.groupOf(i)
		c.last = gi
	}
	gr := &g.idx.groups[gi]
	from, k := g.idx.recordAt(gr, i-gr.first)
	k += gr.first
	if gi != c.gi || c.k > i || c.k < k {
		// Behind, in another group, or past a mark nearer than where the
		// reader stands: start at the mark.
		r.seek(from)
		r.stop = g.idx.recordsEnd(gi, g.size)
		c.gi, c.k = gi, k
	}
	want := g.idx.addrIn(gr, i)
	for k = c.k; ; k++ {
		c.gi = -1 // until the record is read whole
		off := r.off()
		r.rec = "dump"
		tag, err := r.uvarint()
		if err != nil {
			return 0, 0, 0, err
		}
		if tag != tagObject {
			return 0, 0, 0, r.errorf(off, "re-reading object %d: found tag %d, not an object record", i, tag)
		}
		r.rec = recordNames[tagObject]
		addr, err := r.uvarint()
		if err != nil {
			return 0, 0, 0, err
		}
		n, _, err := r.length("contents", g.size)
		if err != nil {
			return 0, 0, 0, err
		}
		if k < i {
			r.skip(n)
			if err := p.fieldList(uint64(n), 1); err != nil {
				return 0, 0, 0, err
			}
			c.gi, c.k = gi, k+1
			continue
		}
		if addr != want || uint64(n) != gr.size {
			return 0, 0, 0, r.errorf(off, "re-reading object %d: found object %#x of %d bytes, want %#x of %d (file changed?)", i, addr, n, want, gr.size)
		}
		return gi, addr, n, nil
	}
}

// skipRest moves the reader from the contents of object v's record, n
// bytes, past its field list, which it leaves in the parser's offs, to the
// next record.
func (c *recordCursor) skipRest(gi int, v NodeID, n int64) error {
	c.r.skip(n)
	if err := c.p.fieldList(uint64(n), 1); err != nil {
		return err
	}
	c.gi, c.k = gi, uint32(v)+1
	return nil
}

// Word returns the pointer-sized word at off of the object's contents, in
// the dump's byte order, reading it from the file when it lies past
// Contents. It returns 0 when off is out of range or the file cannot be
// read. Unlike Graph.ObjectRecord, it is not safe for concurrent use.
func (rec *ObjectRecord) Word(off int64) uint64 {
	words := rec.all.src.words
	ps := words.size
	if ps == 0 || off < 0 || off > int64(rec.Size)-ps {
		return 0
	}
	if off+ps <= int64(len(rec.Contents)) {
		return words.word(rec.Contents, off)
	}
	if rec.wOff < 0 || off < rec.wOff || off+ps > rec.wOff+int64(len(rec.win)) {
		n := min(int64(recordWindow), int64(rec.Size)-off)
		if cap(rec.win) < int(n) {
			rec.win = make([]byte, recordWindow)
		}
		rec.win = rec.win[:n]
		rec.wOff = -1
		if rec.all.ReadAt(rec.win, off) != nil {
			return 0
		}
		rec.wOff = off
	}
	return words.word(rec.win, off-rec.wOff)
}

// All returns all the object's contents, in the file.
func (rec *ObjectRecord) All() Contents { return rec.all }

// FrameContents returns the contents of Dump().Frames[i], in the file:
// Size bytes starting at the frame's SP. It is safe for concurrent use.
func (g *Graph) FrameContents(i int) (Contents, error) {
	if i < 0 || i >= len(g.dump.Frames) {
		return Contents{}, fmt.Errorf("%s: frame %d out of range (%d frames)", g.path, i, len(g.dump.Frames))
	}
	f := &g.dump.Frames[i]
	return Contents{src: g.src, off: f.contents, n: int64(f.Size)}, nil
}

// FrameWord returns the pointer-sized word at off of the contents of
// Dump().Frames[i], read from the file, in the dump's byte order. It
// returns 0 when i or off is out of range or the file cannot be read. It
// is safe for concurrent use.
func (g *Graph) FrameWord(i int, off int64) uint64 {
	c, err := g.FrameContents(i)
	if err != nil {
		return 0
	}
	return c.Word(off)
}
