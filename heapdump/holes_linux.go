package heapdump

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// Whence values of lseek that find a file's data and holes.
const (
	seekData = 3
	seekHole = 4
)

// maxExtents bounds the extents heldBytes looks at: past them, the rest
// of the file counts as data.
const maxExtents = 1 << 16

// heldBytes returns the bytes of the file ra of size bytes that are not
// holes, as the file system reports them (SEEK_DATA, SEEK_HOLE): a hole
// reads as zeros, which make no record that costs memory, so the budget
// grows with the bytes the file holds, not with a size a sparse file
// claims. It returns size for anything but a file, or where the file
// system does not tell.
func heldBytes(ra io.ReaderAt, size int64) int64 {
	f, ok := ra.(*os.File)
	if !ok {
		return size
	}
	held, off := int64(0), int64(0)
	for range maxExtents {
		if off >= size {
			return held
		}
		data, err := f.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) {
			return held // nothing but a hole from off on
		}
		if err != nil || data < off {
			return size
		}
		hole, err := f.Seek(data, seekHole)
		if err != nil || hole <= data {
			return size
		}
		held += min(hole, size) - min(data, size)
		off = hole
	}
	return held + max(size-off, 0)
}
