//go:build unix

package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpenAndCheck(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "dump")
	if err := os.WriteFile(reg, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{reg, link} {
		if err := Check(path); err != nil {
			t.Errorf("Check(%s): %v", path, err)
		}
		f, fi, err := Open(path)
		if err != nil || fi.Size() != 4 {
			t.Fatalf("Open(%s): %v", path, err)
		}
		b := make([]byte, 4)
		if _, err := f.Read(b); err != nil || string(b) != "data" {
			t.Errorf("Read(%s) = %q, %v", path, b, err)
		}
		f.Close()
	}
	for path, kind := range map[string]string{fifo: "is a named pipe (FIFO)", dir: "is a directory", "/dev/null": "is a character device"} {
		var nr *NotRegularError
		if err := Check(path); !errors.As(err, &nr) || err.Error() != path+" "+kind+", not a regular file" {
			t.Errorf("Check(%s) = %v", path, err)
		}
		// Open returns at once: no writer is needed for a FIFO opened
		// without blocking.
		if f, _, err := Open(path); !errors.As(err, &nr) {
			t.Errorf("Open(%s) = %v", path, err)
			if f != nil {
				f.Close()
			}
		}
	}
	if _, _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v", err)
	}
}
