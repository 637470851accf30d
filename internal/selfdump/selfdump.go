// Package selfdump writes a heap dump of the running process
// (runtime/debug.WriteHeapDump) to a new 0600 file, one dump at a time per
// process: each stops the world, and retain and watch may ask at once. It
// is the one way ctxleak dumps the process it runs in, and refuses, with a
// *LeakedError, where the runtime would die instead (see Check).
package selfdump

import (
	"errors"
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
// 0600. dir must exist. It returns a *LeakedError, and creates no file,
// when Check refuses the dump.
func Write(dir, pattern string) (Dump, error) {
	mu.Lock()
	defer mu.Unlock()
	if err := Check(); err != nil {
		return Dump{}, err
	}
	f, err := os.CreateTemp(dir, pattern) // 0600, O_EXCL
	if err != nil {
		return Dump{}, fmt.Errorf("creating the heap dump: %w", err)
	}
	return write(f)
}

// WriteFile writes a heap dump of the process to path, a new file (never
// an existing one) of mode 0600. It returns a *LeakedError, and creates no
// file, when Check refuses the dump.
func WriteFile(path string) (Dump, error) {
	mu.Lock()
	defer mu.Unlock()
	if err := Check(); err != nil {
		return Dump{}, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Dump{}, fmt.Errorf("creating the heap dump: %w", err)
	}
	return write(f)
}

// write dumps the heap into f and closes it; on error it removes the file.
// The caller holds mu and has checked the process.
func write(f *os.File) (Dump, error) {
	d := Dump{Path: f.Name()}
	start := time.Now()
	debug.WriteHeapDump(f.Fd())
	d.Took = time.Since(start)

	st, statErr := f.Stat()
	if err := f.Close(); err != nil {
		return Dump{}, errors.Join(fmt.Errorf("writing the heap dump %s: %w", d.Path, err), os.Remove(d.Path))
	}
	if statErr == nil {
		d.Size = st.Size()
	}
	return d, nil
}
