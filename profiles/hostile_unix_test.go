//go:build unix

package profiles_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ctxleak/ctxleak/profiles"
)

// TestHostileFIFO: a named pipe is refused without being opened (opening
// it would wait for a writer forever).
func TestHostileFIFO(t *testing.T) {
	name := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	_, err := new(profiles.Loader).Load(context.Background(), name)
	if err == nil || !strings.Contains(err.Error(), name+": is a named pipe (FIFO), not a regular file") {
		t.Errorf("Load(fifo) = %v", err)
	}
}
