package heapdump

import (
	"encoding/binary"
	"fmt"
	"io"
)

// reader is a buffered, forward-only reader over an io.ReaderAt of known
// size. It tracks the file offset of every byte, so errors can name it, and
// skips data it does not need without reading it.
//
// It does not use bufio: the parser needs to look back at an object's
// contents after reading the field list that follows them, so a record's
// contents can be pinned in the buffer while the rest of it is read.
//
// It reads with ReadAt into a buffer of a few MiB, which the parser then
// reads from the processor's cache. Reading a mapped file instead, with no
// copy, cost the parser more than the copies save: on this project's
// machine, BenchmarkLoad took 1.5 times as long.
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
	n := int64(headroom + chunk)
	if size-from+16 < n {
		n = size - from + 16
	}
	return &reader{ra: ra, path: path, size: size, pin: -1, base: from, buf: make([]byte, n)}
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
