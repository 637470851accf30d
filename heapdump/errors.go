package heapdump

import (
	"errors"
	"fmt"
	"math"
)

// FormatError reports malformed input: a heap dump that is truncated, has an
// unknown record tag, a length past the end of the file, or a value the runtime
// never writes. Offset is the byte offset in the file of the value that is
// wrong (for a truncated file, of the value that was cut), and Record names the
// kind of record being read ("object record", "stack frame record", ...).
type FormatError struct {
	Path   string // file name as given to Load or Read
	Offset int64  // byte offset of the offending value
	Record string // record kind, e.g. "object record"; "dump" outside any record
	Msg    string // what is wrong
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: offset %d: %s: %s", e.Path, e.Offset, e.Record, e.Msg)
}

// ErrTooLarge is returned (wrapped) when a dump has more objects, roots or
// pointer edges than the graph's uint32 node and edge indices can hold.
var ErrTooLarge = errors.New("too large for 32-bit graph indices")

// maxIndex is the largest node or edge count the graph accepts: indices are
// uint32 and one value is kept free as a sentinel. Where int has 32 bits
// (GOARCH=386), the largest int is the limit.
const maxIndex = min(1<<32-2, math.MaxInt)
