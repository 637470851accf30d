package heapdump

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime/debug"
)

// reader is a buffered, forward-only reader over an io.ReaderAt of known
// size. It tracks the file offset of every byte, so errors can name it, and
// skips data it does not need without reading it.
//
// It does not use bufio: the parser needs to look back at an object's
// contents after reading the field list that follows them, so a record's
// contents can be pinned in the buffer while the rest of it is read.
//
// The parsers that read the file front to back (newMappedReader) read a
// window of it mapped into memory, which they move along as they read:
// the kernel maps the pages it has in its cache rather than copy them,
// and the bytes of objects with no pointers are never read. (ctxleak
// holders, side by side: 1.22 to 1.15 s on a 1.2 GB dump of 10M objects,
// 0.39 to 0.36 s on one of 100,000 goroutines.) Other readers, and a
// parser where the file cannot be mapped, read with ReadAt into a buffer
// of a few MiB.
type reader struct {
	ra   io.ReaderAt
	path string
	size int64 // file size

	buf  []byte
	base int64 // file offset of buf[0]
	pos  int   // next byte to read, index into buf
	end  int   // end of the file data in buf
	pin  int64 // file offset that fill must keep in the buffer, or -1
	// stop, if above 0, is a file offset fill reads no further than,
	// unless what it was asked for lies beyond: a reader that jumps from
	// record to record reads what it needs, not a whole buffer each time.
	stop int64

	rec string // kind of the record being read, for errors

	// m, if not nil, maps the file, and buf is a window of it (remap):
	// the goroutine that reads through it must guard it (guardMapped).
	m *mapping

	// progress, if not nil, counts the bytes read (Options.Progress), up
	// to the offset counted.
	progress *readProgress
	counted  int64
}

// Buffer sizes. A buffer holds headroom bytes for the unread rest of the
// current record, then chunk bytes of new data. Everything fill is asked
// for must fit in the headroom with what is pinned: strings (maxString),
// and object and frame contents read through the buffer (maxBuffered) with
// the fields that follow them.
const (
	headroom    = 512 << 10
	maxString   = 256 << 10
	maxBuffered = 64 << 10
)

// chunk is the room for new data past the headroom, and the most a read
// takes at once; tests lower it, so that records straddle many reads.
var chunk = 2 << 20

func newReader(ra io.ReaderAt, size int64, path string) *reader {
	return newReaderFrom(ra, size, path, 0)
}

// newReaderFrom returns a reader whose first byte is the file's byte at
// offset from.
func newReaderFrom(ra io.ReaderAt, size int64, path string, from int64) *reader {
	return &reader{ra: ra, path: path, size: size, pin: -1, base: from, buf: make([]byte, bufferSize(size, from))}
}

// bufferSize is the size of the buffer of a reader from file offset from.
func bufferSize(size, from int64) int64 {
	return min(int64(headroom+chunk), size-from+16)
}

// newMappedReader returns a reader from file offset from that maps the
// file, on Linux when ra is a file of the operating system's, or else
// copies. The caller must release it.
func newMappedReader(ra io.ReaderAt, size int64, path string, from int64) *reader {
	m := newMapping(ra, size)
	if m == nil {
		return newReaderFrom(ra, size, path, from)
	}
	return &reader{ra: ra, path: path, size: size, pin: -1, base: from, m: m}
}

// release lets go of the buffer, or unmaps the window of a reader that
// maps the file. Nothing may read the reader after; release can be called
// again.
func (r *reader) release() {
	if r.m != nil {
		r.m.unmap()
	}
	r.buf, r.pos, r.end = nil, 0, 0
}

// off returns the file offset of the next byte to read.
func (r *reader) off() int64 { return r.base + int64(r.pos) }

// remaining returns the number of file bytes not read yet.
func (r *reader) remaining() int64 { return r.size - r.off() }

// inBuf reports whether the buffer holds the n file bytes at off.
func (r *reader) inBuf(off, n int64) bool {
	return off >= r.base && off+n <= r.base+int64(r.end)
}

func (r *reader) errorf(off int64, format string, args ...any) error {
	return &FormatError{Path: r.path, Offset: off, Record: r.rec, Msg: fmt.Sprintf(format, args...)}
}

func (r *reader) truncated(off int64) error {
	return r.errorf(off, "unexpected end of file")
}

// fill makes at least n bytes available at r.pos, reading more of the file
// as needed, and keeps the bytes from the pin on. It fails with a
// truncation error at off if the file ends first.
func (r *reader) fill(n int, off int64) error {
	if r.end-r.pos >= n {
		return nil
	}
	if int64(n) > r.remaining() {
		return r.truncated(off)
	}
	keep := r.pos
	if r.pin >= 0 && r.pin < r.off() {
		keep = int(r.pin - r.base)
	}
	if r.m != nil {
		return r.remap(n, off, keep)
	}
	if keep > 0 {
		copy(r.buf, r.buf[keep:r.end])
		r.base += int64(keep)
		r.pos -= keep
		r.end -= keep
	}
	for r.end-r.pos < n {
		want := int64(min(len(r.buf)-r.end, chunk))
		if left := r.size - (r.base + int64(r.end)); left < want {
			want = left
		}
		if s := r.stop - (r.base + int64(r.end)); r.stop > 0 && s >= int64(n-(r.end-r.pos)) && s < want {
			want = s
		}
		if want <= 0 {
			if r.end == len(r.buf) {
				return r.errorf(off, "record needs more than the %d-byte read buffer", len(r.buf))
			}
			return r.truncated(off)
		}
		m, err := r.ra.ReadAt(r.buf[r.end:r.end+int(want)], r.base+int64(r.end))
		r.end += m
		if m == 0 && err != nil {
			return r.readError(r.base+int64(r.end), err)
		}
	}
	return nil
}

// remap is fill for a reader that maps the file: it moves the window to
// start at the page of the first byte to keep, index keep, and hold the n
// bytes at pos, 4 chunks in all, but no more than a buffer would keep.
// Where the file cannot be mapped, the reader goes on with a buffer.
func (r *reader) remap(n int, off int64, keep int) error {
	from, at := r.base+int64(keep), r.off()
	if at+int64(n)-from > int64(headroom+chunk) {
		return r.errorf(off, "record needs more than the %d-byte read buffer", headroom+chunk)
	}
	start := from &^ (pageSize - 1)
	size := min(max(int64(4*chunk), at+int64(n)-start), r.size-start)
	mem, err := r.m.remap(start, size)
	if err != nil {
		// Read from here on with a buffer, from the first byte to keep.
		r.m.unmap()
		r.m = nil
		r.buf = make([]byte, bufferSize(r.size, from))
		r.base, r.pos, r.end = from, 0, 0
		if err := r.fill(int(at-from)+n, off); err != nil {
			return err
		}
		r.pos = int(at - from)
		return nil
	}
	r.buf, r.base, r.pos, r.end = mem, start, int(at-start), len(mem)
	return nil
}

// guardMapped is deferred by a goroutine that reads r while it maps the
// file, as defer r.guardMapped(errp, debug.SetPanicOnFault(true)): when
// the file shrinks, the pages of the window past its new end fault
// (SIGBUS), which it turns into an error at errp (if not nil) rather than
// a crash, and it puts back the goroutine's setting, old. Any other panic
// goes on. The rest of the page where the file now ends reads as zeros:
// an error at errp that follows them becomes the shrinking too.
func (r *reader) guardMapped(errp *error, old bool) {
	debug.SetPanicOnFault(old)
	e := recover()
	if e == nil {
		if errp != nil && *errp != nil && r.m != nil {
			if now, ok := r.m.fileSize(); ok && now < r.size {
				*errp = r.readError(now, io.EOF)
			}
		}
		return
	}
	f, ok := e.(interface{ Addr() uintptr })
	if !ok || r.m == nil {
		panic(e)
	}
	off, ok := r.m.index(f.Addr())
	if !ok {
		panic(e)
	}
	if errp != nil {
		*errp = r.readError(off, io.EOF)
	}
}

func (r *reader) readError(off int64, err error) error {
	if err == io.EOF {
		return r.errorf(off, "file shrank while reading")
	}
	return fmt.Errorf("%s: %w", r.path, err)
}

// skip advances over n bytes, which the caller has checked against
// remaining. Bytes not yet in the buffer are not read at all.
func (r *reader) skip(n int64) {
	if n <= int64(r.end-r.pos) {
		r.pos += int(n)
		return
	}
	r.base = r.off() + n
	r.pos, r.end = 0, 0
}

// seek moves the reader to file offset off, keeping the buffer when it
// holds off.
func (r *reader) seek(off int64) {
	if off >= r.base && off <= r.base+int64(r.end) {
		r.pos = int(off - r.base)
		return
	}
	r.base = off
	r.pos, r.end = 0, 0
}

// uvarint reads one unsigned varint.
func (r *reader) uvarint() (uint64, error) {
	if r.pos < r.end {
		if b := r.buf[r.pos]; b < 0x80 {
			r.pos++
			return uint64(b), nil
		}
	}
	if r.end-r.pos >= binary.MaxVarintLen64 {
		v, next := uvarintAt(r.buf[:r.end], r.pos) // up to 8 bytes at once
		if next < 0 {
			return 0, r.errorf(r.off(), "varint overflows 64 bits")
		}
		r.pos = next
		return v, nil
	}
	return r.uvarintSlow()
}

func (r *reader) uvarintSlow() (uint64, error) {
	off := r.off()
	n := int64(binary.MaxVarintLen64)
	if left := r.remaining(); left < n {
		n = left
	}
	if n == 0 {
		return 0, r.truncated(off)
	}
	if err := r.fill(int(n), off); err != nil {
		return 0, err
	}
	v, k := binary.Uvarint(r.buf[r.pos : r.pos+int(n)])
	if k == 0 {
		return 0, r.truncated(off)
	}
	if k < 0 {
		return 0, r.errorf(off, "varint overflows 64 bits")
	}
	r.pos += k
	return v, nil
}

// bool reads a varint that must be 0 or 1.
func (r *reader) bool() (bool, error) {
	off := r.off()
	v, err := r.uvarint()
	if err != nil {
		return false, err
	}
	if v > 1 {
		return false, r.errorf(off, "boolean value %d is not 0 or 1", v)
	}
	return v == 1, nil
}

// length reads a byte count and checks it against the rest of the file and
// against limit.
func (r *reader) length(what string, limit int64) (int64, int64, error) {
	off := r.off()
	v, err := r.uvarint()
	if err != nil {
		return 0, off, err
	}
	if v > uint64(r.remaining()) {
		return 0, off, r.errorf(off, "%s length %d past end of file (%d bytes left)", what, v, r.remaining())
	}
	if v > uint64(limit) {
		return 0, off, r.errorf(off, "%s length %d exceeds the limit of %d", what, v, limit)
	}
	return int64(v), off, nil
}

// bytes reads a length-prefixed string and returns it in the buffer; the
// result is valid until the next read.
func (r *reader) bytes(what string) ([]byte, error) {
	n, off, err := r.length(what, maxString)
	if err != nil {
		return nil, err
	}
	if err := r.fill(int(n), off); err != nil {
		return nil, err
	}
	b := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, nil
}

// string reads a length-prefixed string.
func (r *reader) string(what string) (string, error) {
	b, err := r.bytes(what)
	return string(b), err
}

// readAt copies len(p) file bytes at off into p, from the buffer where it
// holds them and from the file otherwise. The caller has checked the range.
func (r *reader) readAt(p []byte, off int64) error {
	if r.inBuf(off, int64(len(p))) {
		copy(p, r.buf[off-r.base:])
		return nil
	}
	n, err := r.ra.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil {
		err = io.EOF
	}
	return r.readError(off+int64(n), err)
}
