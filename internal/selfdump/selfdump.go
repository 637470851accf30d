// Package selfdump writes a heap dump of the running process
// (runtime/debug.WriteHeapDump) to a new 0600 file, one dump at a time per
// process: each stops the world, and retain and watch may ask at once.
package selfdump

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// mu serializes heap dumps across the process.
var mu sync.Mutex

// Dump is a heap dump written by Write.
type Dump struct {
	Path string
	Size int64
	// Took is the time the dump took to write, the world stopped.
	Took time.Duration
}

// Write writes a heap dump of the process into a new file of dir named
// after pattern (as os.CreateTemp names it): never an existing file, mode
// 0600. dir must exist.
func Write(dir, pattern string) (Dump, error) {
	f, err := os.CreateTemp(dir, pattern) // 0600, O_EXCL
	if err != nil {
		return Dump{}, fmt.Errorf("creating the heap dump: %w", err)
	}
	d := Dump{Path: f.Name()}

	mu.Lock()
	start := time.Now()
	debug.WriteHeapDump(f.Fd())
	d.Took = time.Since(start)
	mu.Unlock()

	st, statErr := f.Stat()
	if err := f.Close(); err != nil {
		return d, fmt.Errorf("writing the heap dump %s: %w", d.Path, err)
	}
	if statErr == nil {
		d.Size = st.Size()
	}
	return d, nil
}
