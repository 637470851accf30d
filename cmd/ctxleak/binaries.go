package main

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
)

// openBinary opens the executable at path, with maxInflated as
// binsym.MaxInflated unless it is 0, or returns the one this process
// already opened from the same file (same absolute path, size and
// modification time) with the same limit. Reading an executable's DWARF types is most of the
// cost of naming holders; a process that runs several commands (the tests
// run the CLI in-process) then reads each executable once. An opened
// binary stays open until the process exits: binsym.Binary is safe for
// concurrent use.
func openBinary(path string, maxInflated uint64) (*binsym.Binary, error) {
	var opts []binsym.Option
	if maxInflated > 0 {
		opts = append(opts, binsym.MaxInflated(maxInflated))
	}
	fi, err := os.Stat(path)
	if err != nil {
		return binsym.Open(path, opts...) // its error names the path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return binsym.Open(path, opts...)
	}
	key := binaryKey{path: abs, size: fi.Size(), mtime: fi.ModTime(), maxInflated: maxInflated}
	openBinaries.Lock()
	defer openBinaries.Unlock()
	if b, ok := openBinaries.m[key]; ok {
		return b, nil
	}
	b, err := binsym.Open(path, opts...)
	if err != nil {
		return nil, err
	}
	if openBinaries.m == nil {
		openBinaries.m = make(map[binaryKey]*binsym.Binary)
	}
	openBinaries.m[key] = b
	return b, nil
}

// binaryKey identifies an executable file's contents as far as stat can.
type binaryKey struct {
	path        string
	size        int64
	mtime       time.Time
	maxInflated uint64
}

// openBinaries are the executables openBinary opened, by file.
var openBinaries struct {
	sync.Mutex
	m map[binaryKey]*binsym.Binary
}
