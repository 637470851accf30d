//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// Inputs that are named pipes are refused with exit 2 before anything
// opens them: opening a FIFO for reading would block until a writer came.
func TestFIFOInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	dump := filepath.Join(dir, "app.heapdump")
	if err := os.WriteFile(dump, []byte("go1.7 heap dump\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"holders", fifo},
		{"holders", dump, "--binary", fifo},
		{"analyze", fifo},
		{"analyze", dump, "--base", fifo},
		{"cost", "--base", fifo},
	} {
		done := make(chan struct{})
		var code int
		var stderr bytes.Buffer
		go func() {
			defer close(done)
			code = execute(strings.NewReader(""), &bytes.Buffer{}, &stderr, args)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("ctxleak %s: still running after a minute: blocked on the FIFO", strings.Join(args, " "))
		}
		if code != exitUsage || !strings.Contains(stderr.String(), fifo) || !strings.Contains(stderr.String(), "named pipe (FIFO), not a regular file") {
			t.Errorf("ctxleak %s: exit %d, %q; want exit 2 naming the FIFO", strings.Join(args, " "), code, stderr.String())
		}
	}
}

// hostileChildEnv holds the arguments of ctxleak for TestHostileChild,
// separated by newlines.
const hostileChildEnv = "CTXLEAK_TEST_HOSTILE_ARGS"

// TestHostileChild is ctxleak in a child process of TestHostileDumpMemory.
func TestHostileChild(t *testing.T) {
	args := os.Getenv(hostileChildEnv)
	if args == "" {
		t.Skip("runs as a child of TestHostileDumpMemory")
	}
	os.Exit(execute(os.Stdin, os.Stdout, os.Stderr, strings.Split(args, "\n")))
}

// A 57-byte dump made 32 GiB long by a hole, whose memory profile bucket
// asks for a stack of 10G frames (400 GB of positions): ctxleak holders,
// in a process of its own, refuses it with exit 2 naming the offset,
// with a peak RSS (the kernel's count, race detector included) under
// 256 MiB.
func TestHostileDumpMemory(t *testing.T) {
	e := dumptest.NewEncoder().U(6, 0, 8, 1<<40, 1<<40+1<<20).S([]byte("amd64")).S([]byte("go1.26.0")).U(2)
	e.U(16, 0x1000, 16) // memprof bucket: address, size
	off := len(e.B)
	e.U(10 << 30) // stack depth
	path := filepath.Join(t.TempDir(), "depth.heapdump")
	if err := os.WriteFile(path, e.B, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 32<<30); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileChild$")
	cmd.Env = append(os.Environ(), hostileChildEnv+"=holders\n"+path, "GORACE="+noExitSleep())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	want := "offset " + strconv.Itoa(off) + ": memprof bucket record: stack depth 10737418240 is more than the runtime's 1024"
	if code != exitUsage || !strings.Contains(stderr.String(), want) {
		t.Fatalf("exit %d (%v), stderr %q; want exit 2 and %q", code, err, stderr.String(), want)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no resource usage for the child on this system")
	}
	if rss := int64(ru.Maxrss) << 10; rss > 256<<20 { // Maxrss is in KiB on Linux
		t.Errorf("peak RSS %d bytes, want at most 256 MiB", rss)
	}
}
