//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAnalyzeFIFO: a named pipe is refused, never opened (opening it waits
// for a writer). Should it be opened, the test opens the other end so the
// command ends, and fails.
func TestAnalyzeFIFO(t *testing.T) {
	name := filepath.Join(t.TempDir(), "profile.pb.gz")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := ctxleak(t, "analyze", name)
		done <- result{code, stdout, stderr}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Error("analyze opened the FIFO and waits for a writer")
		if w, err := os.OpenFile(name, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		r = <-done
	}
	if r.code != exitUsage || !strings.Contains(r.stderr, name) || !strings.Contains(r.stderr, "is a named pipe (FIFO), not a regular file") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
