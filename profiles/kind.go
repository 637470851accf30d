package profiles

import (
	"bufio"
	"bytes"
	"io"
)

// heapDumpHeader starts every file runtime/debug.WriteHeapDump writes.
const heapDumpHeader = "go1.7 heap dump\n"

// HeapDumpError is the error for an input that is a Go heap dump, not a
// profile. The Loader tells it from the first bytes, before any size or
// format limit, so that a dump of any size gets the same answer.
type HeapDumpError struct {
	// Gzipped is set when the dump is inside gzip data.
	Gzipped bool
}

func (e *HeapDumpError) Error() string {
	if e.Gzipped {
		return "gzip data holding a Go heap dump (runtime/debug.WriteHeapDump), not a pprof profile"
	}
	return "a Go heap dump (runtime/debug.WriteHeapDump), not a pprof profile"
}

// checkHead returns an *Error wrapping a *HeapDumpError when head, the
// first bytes of an input (decompressed when gzipped), starts as a heap
// dump.
func checkHead(source string, head []byte, gzipped bool) error {
	if bytes.HasPrefix(head, []byte(heapDumpHeader)) {
		return &Error{Source: source, Err: &HeapDumpError{Gzipped: gzipped}}
	}
	return nil
}

// peekHead returns a reader of all of r and an *Error when r starts as a
// heap dump. A read error is left for the caller's next read to report.
func peekHead(source string, r io.Reader, gzipped bool) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64)
	head, _ := br.Peek(len(heapDumpHeader))
	return br, checkHead(source, head, gzipped)
}
