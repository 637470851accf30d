//go:build !linux

package heapdump

import (
	"errors"
	"io"
)

// mapping maps files on Linux only (mapped_linux.go): elsewhere
// newMapping returns nil, and every reader copies.
type mapping struct{}

var pageSize = int64(4096)

func newMapping(io.ReaderAt, int64) *mapping { return nil }

func (m *mapping) remap(off, size int64) ([]byte, error) {
	return nil, errors.New("heapdump: files are not mapped on this system")
}

func (m *mapping) unmap() {}

func (m *mapping) fileSize() (int64, bool) { return 0, false }

func (m *mapping) index(addr uintptr) (int64, bool) { return 0, false }
