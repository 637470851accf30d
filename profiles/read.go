package profiles

import (
	"io"
	"strconv"

	"github.com/ctxleak/ctxleak/internal/bigarray"
)

// readChunk is the largest piece ReadLimited reads at once. Reading in
// pieces and joining them once at the end takes at most twice the bytes
// read, where a growing buffer copied at each doubling can take three
// times, and more than the cap.
const readChunk = 16 << 20

// untrustedHint caps a size hint that the input gives about itself (a
// Content-Length, a gzip trailer): memory is allocated for bytes that have
// come, past the first few MiB.
const untrustedHint = 4 << 20

// ReadLimited reads r to its end, refusing more than maxBytes with a
// *LimitError of LimitSize that names what (such as "input" or
// "download"). sizeHint, when positive, is the size expected (a file's):
// it is read into one buffer of that size. It never holds more than
// maxBytes+1 bytes of r, and allocates at most twice what it returns plus
// one piece of readChunk.
func ReadLimited(r io.Reader, what string, maxBytes, sizeHint int64) ([]byte, error) {
	return readLimited(r, what, maxBytes, sizeHint, nil)
}

// readLimited is ReadLimited, telling s, if not nil, what it reads as it
// reads it.
func readLimited(r io.Reader, what string, maxBytes, sizeHint int64, s *costStream) ([]byte, error) {
	defer func() {
		if s != nil {
			s.end(false)
		}
	}()
	var (
		chunks [][]byte
		total  int64
	)
	next := min(max(sizeHint+1, 64<<10), maxBytes+1)
	for {
		buf := make([]byte, int(next))
		if s != nil {
			s.begin(buf)
		}
		n, err := fill(r, buf, s)
		total += int64(n)
		chunks = append(chunks, buf[:n])
		if total > maxBytes {
			return nil, &LimitError{Limit: LimitSize, What: what, Max: maxBytes, Factor: 1, MaxBytes: maxBytes}
		}
		if err == io.EOF {
			if s != nil {
				s.end(true) // before the pieces are joined
				s = nil
			}
			break
		}
		if err != nil {
			return nil, &readError{at: total, err: err}
		}
		next = min(max(total/2, 64<<10), readChunk, maxBytes+1-total)
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	out := make([]byte, int(total))
	n := 0
	for i, c := range chunks {
		bigarray.Copy(out[n:], c)
		n += len(c)
		chunks[i] = nil
	}
	return out, nil
}

// fill reads into buf until it is full or r fails; unlike io.ReadFull, it
// returns r's own error (io.EOF at the end), so an io.ErrUnexpectedEOF of
// a cut gzip stream is told from the end of the data. It tells s, if not
// nil, how many bytes it has read after every read.
func fill(r io.Reader, buf []byte, s *costStream) (int, error) {
	n, empty := 0, 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if s != nil && m > 0 {
			s.grew(n)
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			// io.Reader allows a read of nothing without an error; a
			// reader that keeps doing it is broken, as bufio says.
			if empty++; empty == 100 {
				return n, io.ErrNoProgress
			}
		}
	}
	return n, nil
}

// readError is a failure to read, at a byte offset.
type readError struct {
	at  int64
	err error
}

func (e *readError) Error() string {
	return "reading at byte " + strconv.FormatInt(e.at, 10) + ": " + e.err.Error()
}

func (e *readError) Unwrap() error { return e.err }
