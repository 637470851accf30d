package main

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
)

// openBinary opens the executable at path, or returns the one this process
// already opened from the same file (same absolute path, size and
// modification time). Reading an executable's DWARF types is most of the
// cost of naming holders; a process that runs several commands (the tests
// run the CLI in-process) then reads each executable once. An opened
// binary stays open until the process exits: binsym.Binary is safe for
// concurrent use.
func openBinary(path string) (*binsym.Binary, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return binsym.Open(path) // its error names the path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return binsym.Open(path)
	}
	key := binaryKey{path: abs, size: fi.Size(), mtime: fi.ModTime()}
	openBinaries.Lock()
	defer openBinaries.Unlock()
	if b, ok := openBinaries.m[key]; ok {
		return b, nil
	}
	b, err := binsym.Open(path)
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
	path  string
	size  int64
	mtime time.Time
}

// openBinaries are the executables openBinary opened, by file.
var openBinaries struct {
	sync.Mutex
	m map[binaryKey]*binsym.Binary
}
