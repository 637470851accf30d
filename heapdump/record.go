package heapdump

import "fmt"

// ObjectRecord is an object record read back from the file: the few objects
// on a holder path need their contents (interface type words, closure code
// pointers), which the graph does not keep.
type ObjectRecord struct {
	Addr       uint64
	Size       uint64
	Contents   []byte   // the first min(Size, limit) bytes
	PtrOffsets []uint64 // offsets of the pointer fields, ascending
}

// ObjectRecord re-reads the record of object v from the file. It returns at
// most limit bytes of contents, all of them if limit <= 0. The graph keeps
// the file offset of every run of up to 1024 consecutive records, so this
// reads from the start of the run to the object. It is safe for concurrent
// use.
func (g *Graph) ObjectRecord(v NodeID, limit int) (*ObjectRecord, error) {
	if int(v) >= g.numObjects {
		return nil, fmt.Errorf("%s: object %d out of range (%d objects)", g.path, v, g.numObjects)
	}
	i := uint32(v)
	gr := &g.idx.groups[g.idx.groupOf(i)]
	r := &reader{ra: g.ra, path: g.path, size: g.size, buf: make([]byte, min(16<<10, g.size+16)), base: gr.file, pin: -1}
	p := &parser{r: r, ptrSize: uint64(g.words.size), order: g.words.order, haveParams: true, wOff: -1}
	want := g.idx.addr(i)
	for k := gr.first; ; k++ {
		off := r.off()
		r.rec = "dump"
		tag, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		if tag != tagObject {
			return nil, r.errorf(off, "re-reading object %d: found tag %d, not an object record", i, tag)
		}
		r.rec = recordNames[tagObject]
		addr, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		n, _, err := r.length("contents", g.size)
		if err != nil {
			return nil, err
		}
		if k < i {
			r.skip(n)
			if err := p.fieldList(uint64(n), true); err != nil {
				return nil, err
			}
			continue
		}
		if addr != want || uint64(n) != gr.size {
			return nil, r.errorf(off, "re-reading object %d: found object %#x of %d bytes, want %#x of %d (file changed?)", i, addr, n, want, gr.size)
		}
		rec := &ObjectRecord{Addr: addr, Size: uint64(n)}
		m := n
		if limit > 0 && int64(limit) < m {
			m = int64(limit)
		}
		rec.Contents = make([]byte, m)
		if err := r.readAt(rec.Contents, r.off()); err != nil {
			return nil, err
		}
		r.skip(n)
		if err := p.fieldList(uint64(n), true); err != nil {
			return nil, err
		}
		rec.PtrOffsets = append([]uint64(nil), p.offs...)
		return rec, nil
	}
}

// FrameContents re-reads the contents of Dump().Frames[i] from the file: Size
// bytes starting at the frame's SP. It is safe for concurrent use.
func (g *Graph) FrameContents(i int) ([]byte, error) {
	if i < 0 || i >= len(g.dump.Frames) {
		return nil, fmt.Errorf("%s: frame %d out of range (%d frames)", g.path, i, len(g.dump.Frames))
	}
	f := &g.dump.Frames[i]
	b := make([]byte, f.Size)
	r := &reader{ra: g.ra, path: g.path, size: g.size, pin: -1, rec: recordNames[tagStackFrame]}
	if err := r.readAt(b, f.contents); err != nil {
		return nil, err
	}
	return b, nil
}
