package heapdump

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// reader is a buffered, forward-only reader over an io.ReaderAt of known
// size. It tracks the file offset of every byte, so errors can name it, and
// skips data it does not need without reading it.
//
// It does not use bufio: the parser needs to look back at an object's
// contents after reading the field list that follows them, so a record's
// contents can be pinned in the buffer while the rest of it is read.
//
// A big file (prefetchMin bytes or more) is mapped into memory where the
// system allows, and its buffer is then the whole file: no copy, which
// matters when both cores parse (speculate.go). Else a goroutine reads it
// ahead. A goroutine that reads a mapped file sets
// debug.SetPanicOnFault and defers recoverFault, so that a file that
// shrinks meanwhile is an error, not a crash.
type reader struct {
	ra   io.ReaderAt
	path string
	size int64 // file size

	buf  []byte
	base int64 // file offset of buf[0]
	lo   int   // first byte of buf that holds file data
	pos  int   // next byte to read, index into buf
	end  int   // end of the file data in buf
	pin  int64 // file offset that fill must keep in the buffer, or -1
	// stop, if above 0, is a file offset fill reads no further than,
	// unless what it was asked for lies beyond: a reader that jumps from
	// record to record reads what it needs, not a whole buffer each time.
	stop int64

	pf *prefetcher // reads ahead in another goroutine, or nil
	// mapped is set when buf is the whole file, mapped into memory
	// (mapFile): nothing is read or copied. Its pages are resident from
	// dropped, up to which they have been given back, to populated, up
	// to which they have been populated, and where read between (slide).
	mapped    bool
	dropped   int64
	populated int64

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
	chunk       = 2 << 20
	maxString   = 256 << 10
	maxBuffered = 64 << 10
)

// prefetchMin is the file size from which a goroutine reads ahead; tests
// lower it.
var prefetchMin int64 = 16 << 20

func newReader(ra io.ReaderAt, size int64, path string) *reader {
	return newReaderFrom(ra, size, path, 0)
}

// newReaderFrom returns a reader whose first byte is the file's byte at
// offset from.
func newReaderFrom(ra io.ReaderAt, size int64, path string, from int64) *reader {
	r := &reader{ra: ra, path: path, size: size, pin: -1, base: from}
	if size >= prefetchMin {
		if m := mapFile(ra, size); m != nil {
			r.buf, r.base, r.pos, r.end, r.mapped, r.dropped = m, 0, int(from), len(m), true, from/pageSize*pageSize
			return r
		}
		r.pf = startPrefetch(ra, size, from)
		return r
	}
	n := int64(headroom + chunk)
	if size-from+16 < n {
		n = size - from + 16
	}
	r.buf = make([]byte, n)
	return r
}

// close stops the read-ahead goroutine, if any.
func (r *reader) close() {
	if r.mapped {
		unmapFile(r.buf)
		r.buf, r.pos, r.end, r.mapped = nil, 0, 0, false
	}
	if r.pf != nil {
		r.pf.close()
		r.pf = nil
	}
}

// windowStep is how far a mapped file's window moves at a time (slide),
// and the most objectsFast reads before it returns to let it move.
const windowStep = 4 << 20

// pageSize is the granularity of slide.
var pageSize = int64(os.Getpagesize())

// slide moves the window of a mapped file's pages that stays resident
// near the reader. Pages up to two steps ahead are populated in one call
// (populatePages) once the reader is less than a step from the last
// populated: a page read first costs a fault, a trap to the kernel (on
// virtual machines, a costly one) for every 16 pages or so. Pages more
// than headroom bytes behind are given back once every step: a mapped
// file's pages count in the process's resident memory as they are read.
func (r *reader) slide() {
	if !r.mapped {
		return
	}
	off := r.off()
	if off+windowStep > r.populated && r.populated < r.size {
		from := max(r.populated, off/pageSize*pageSize)
		r.populated = min(r.size, (off+2*windowStep)/pageSize*pageSize)
		_ = populatePages(r.buf[from:r.populated])
	}
	to := (off - headroom) / pageSize * pageSize
	if to-r.dropped < windowStep {
		return
	}
	dropPages(r.buf[r.dropped:to])
	r.dropped = to
}

// recoverFault, deferred by a goroutine that reads a mapped file with
// debug.SetPanicOnFault(true), turns a fault in the mapping, which a file
// that shrank since it was mapped causes, into an error in *err. It
// panics again with any other panic.
func (r *reader) recoverFault(err *error) {
	e := recover()
	if e == nil {
		return
	}
	if f, ok := e.(interface{ Addr() uintptr }); ok && r.mapped && len(r.buf) > 0 {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(r.buf)))
		if a := f.Addr(); a >= lo && a-lo < uintptr(len(r.buf)) {
			*err = r.errorf(int64(a-lo), "file shrank while reading")
			return
		}
	}
	panic(e)
}

// shrank reports whether the file, if ra is one, is now shorter than it
// was when the reader was made. A mapped file that shrinks mid-page reads
// as zeros up to the page's end rather than faulting, which the parser may
// take for a malformed record.
func (r *reader) shrank() bool {
	f, ok := r.ra.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Size() < r.size
}

// off returns the file offset of the next byte to read.
func (r *reader) off() int64 { return r.base + int64(r.pos) }

// remaining returns the number of file bytes not read yet.
func (r *reader) remaining() int64 { return r.size - r.off() }

// inBuf reports whether the buffer holds the n file bytes at off. For a
// mapped file, only bytes near the reader count: the pages of others
// would stay resident until slide passes them (a 1 GiB segment's
// contents, or the words of a large object, read with readAt), or for
// good, behind what it dropped. Those are read from the file instead.
func (r *reader) inBuf(off, n int64) bool {
	if r.mapped {
		at := r.off()
		return off >= max(r.dropped, at-mappedReach) && off+n <= min(r.size, at+mappedReach)
	}
	return off-r.base >= int64(r.lo) && off+n <= r.base+int64(r.end)
}

// mappedReach is how far from a mapped reader's offset inBuf counts bytes
// as in the buffer: an object's contents read through the buffer and
// the headroom.
const mappedReach = headroom + maxBuffered

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
	if r.pf != nil {
		return r.fillAhead(n, off, keep)
	}
	if keep > 0 {
		copy(r.buf, r.buf[keep:r.end])
		r.base += int64(keep)
		r.pos -= keep
		r.end -= keep
	}
	for r.end-r.pos < n {
		want := int64(len(r.buf) - r.end)
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

// fillAhead is fill with read-ahead: it moves on to the next chunk the
// prefetcher read, copying the bytes from keep on into its headroom.
func (r *reader) fillAhead(n int, off int64, keep int) error {
	for r.end-r.pos < n {
		at := r.base + int64(r.end) // file offset of the data wanted next
		c, err := r.pf.next(at)
		if err != nil {
			return r.readError(at, err)
		}
		left := r.buf[keep:r.end]
		start := headroom + int(at-c.off) // index in c.buf of the byte at offset at
		if len(left) > start {
			r.pf.release(c.buf)
			return r.errorf(off, "record needs more than the %d-byte read buffer", headroom)
		}
		copy(c.buf[start-len(left):start], left)
		if r.buf != nil {
			r.pf.release(r.buf)
		}
		r.pos += start - len(left) - keep
		r.lo = start - len(left)
		r.base = at - int64(start)
		r.end = headroom + c.n
		r.buf = c.buf
		keep = r.lo
	}
	return nil
}

// skip advances over n bytes, which the caller has checked against
// remaining. Bytes not yet in the buffer are not read at all.
func (r *reader) skip(n int64) {
	if n <= int64(r.end-r.pos) {
		r.pos += int(n)
		return
	}
	to := r.off() + n
	if r.pf != nil {
		r.pf.skipTo(to)
		// Keep the buffer for the next chunk's headroom; it holds nothing
		// needed any more.
		r.base = to - int64(len(r.buf))
		r.lo, r.pos, r.end = len(r.buf), len(r.buf), len(r.buf)
		return
	}
	r.base = to
	r.lo, r.pos, r.end = 0, 0, 0
}

// seek moves the reader to file offset off, keeping the buffer when it
// holds off (a reader without read-ahead only).
func (r *reader) seek(off int64) {
	if r.pf == nil && off >= r.base+int64(r.lo) && off <= r.base+int64(r.end) {
		r.pos = int(off - r.base)
		return
	}
	r.base = off
	r.lo, r.pos, r.end = 0, 0, 0
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
		v, n := binary.Uvarint(r.buf[r.pos:r.end])
		if n <= 0 {
			return 0, r.errorf(r.off(), "varint overflows 64 bits")
		}
		r.pos += n
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

// prefetcher reads the file ahead, chunk by chunk, in its own goroutine,
// into buffers the reader hands back when done with them.
type prefetcher struct {
	ra   io.ReaderAt
	size int64
	to   atomic.Int64 // skip target: the next read starts no earlier
	full chan filled
	free chan []byte
	stop chan struct{}
	done sync.WaitGroup
}

// filled is a chunk read at off: c.n bytes at buf[headroom:].
type filled struct {
	off int64
	buf []byte
	n   int
	err error
}

const prefetchBuffers = 4

// startPrefetch starts reading the file ahead from offset from.
func startPrefetch(ra io.ReaderAt, size, from int64) *prefetcher {
	pf := &prefetcher{
		ra:   ra,
		size: size,
		full: make(chan filled, prefetchBuffers),
		free: make(chan []byte, prefetchBuffers+1),
		stop: make(chan struct{}),
	}
	for range prefetchBuffers {
		pf.free <- make([]byte, headroom+chunk)
	}
	pf.to.Store(from)
	pf.done.Add(1)
	go pf.run()
	return pf
}

func (pf *prefetcher) run() {
	defer pf.done.Done()
	defer close(pf.full)
	off := int64(0)
	for {
		var buf []byte
		select {
		case buf = <-pf.free:
		case <-pf.stop:
			return
		}
		off = max(off, pf.to.Load())
		if off >= pf.size {
			return
		}
		n := int(min(int64(chunk), pf.size-off))
		m, err := pf.ra.ReadAt(buf[headroom:headroom+n], off)
		if m == n {
			err = nil
		} else if err == nil {
			err = io.ErrUnexpectedEOF
		}
		select {
		case pf.full <- filled{off: off, buf: buf, n: m, err: err}:
		case <-pf.stop:
			return
		}
		if err != nil {
			return
		}
		off += int64(m)
	}
}

// next returns the chunk that holds file offset at, dropping chunks before it.
func (pf *prefetcher) next(at int64) (filled, error) {
	for {
		c, ok := <-pf.full
		if !ok {
			return filled{}, io.EOF
		}
		if c.off+int64(c.n) <= at {
			pf.release(c.buf)
			if c.err != nil {
				return filled{}, c.err
			}
			continue
		}
		if c.off > at {
			pf.release(c.buf)
			return filled{}, fmt.Errorf("read ahead past offset %d", at)
		}
		return c, nil
	}
}

func (pf *prefetcher) release(buf []byte) { pf.free <- buf }

// skipTo tells the goroutine not to read before off.
func (pf *prefetcher) skipTo(off int64) { pf.to.Store(off) }

func (pf *prefetcher) close() {
	close(pf.stop)
	pf.done.Wait()
}
