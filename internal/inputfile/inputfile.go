// Package inputfile opens input files without hanging on what is not a
// regular file: opening a named pipe for reading blocks until a writer
// comes, and a device can be read forever.
package inputfile

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError reports an input that is a directory, a named pipe, a
// socket or a device.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Kind names the type of a file that is not a regular file, as in "is a
// named pipe (FIFO)": "a directory", "a named pipe (FIFO)", "a socket",
// "a character device", "a device".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (mode " + m.String() + ")"
}

// Check fails with a *NotRegularError unless path names a regular file
// (after symbolic links), without opening it. Errors from stat are returned
// as they are.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return nil
}

// Open opens path for reading. It opens without blocking, so that a named
// pipe put in place of a file does not hang, then checks what it opened:
// anything but a regular file is closed and refused with a
// *NotRegularError.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, fi, nil
}
