package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/ctxleak/ctxleak/profiles"
	"github.com/google/pprof/profile"
)

// stdinName is the file name that stands for standard input or output.
const stdinName = "-"

// heapDumpHeader starts every file runtime/debug.WriteHeapDump writes.
const heapDumpHeader = "go1.7 heap dump\n"

// await runs fn and returns its error, or the cause of ctx as soon as ctx
// is done: an interrupt ends the command even while fn blocks on input or
// computes (fn is abandoned; the process is about to exit).
func await(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// spoolStdin copies standard input to a new temporary file, mode 0600 (the
// dump reader needs random access), and returns its path and a function
// that removes it.
func (a *app) spoolStdin(ctx context.Context) (path string, remove func(), err error) {
	if f, ok := a.stdin.(*os.File); ok && ui.IsTerminal(f) {
		return "", func() {}, usageErrorf("- reads the dump from standard input, which is a terminal: pipe or redirect a dump in")
	}
	f, err := os.CreateTemp("", "ctxleak-stdin-*.heapdump")
	if err != nil {
		return "", func() {}, usageErrorf("spooling standard input: %v", err)
	}
	remove = func() { os.Remove(f.Name()) }
	err = await(ctx, func() error {
		_, err := io.Copy(f, a.stdin)
		return err
	})
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		remove()
		if ctx.Err() != nil {
			return "", func() {}, err
		}
		return "", func() {}, usageErrorf("spooling standard input to %s: %v", f.Name(), err)
	}
	return f.Name(), remove, nil
}

// readStdinProfile reads a pprof profile from standard input.
func (a *app) readStdinProfile(ctx context.Context) (*profiles.Profile, error) {
	if f, ok := a.stdin.(*os.File); ok && ui.IsTerminal(f) {
		return nil, usageErrorf("- reads a profile from standard input, which is a terminal: pipe or redirect a profile in")
	}
	var data []byte
	err := await(ctx, func() error {
		var err error
		data, err = io.ReadAll(io.LimitReader(a.stdin, profiles.DefaultMaxBytes+1))
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, usageErrorf("reading standard input: %v", err)
	}
	if int64(len(data)) > profiles.DefaultMaxBytes {
		return nil, usageErrorf("standard input: larger than the limit of %d bytes", int64(profiles.DefaultMaxBytes))
	}
	p, err := profiles.Parse(stdinName, data)
	if err != nil {
		return nil, usageErrorf("%v%s", err, profileHint(data))
	}
	return p, nil
}

// fileHead returns up to n bytes from the start of the file at path.
func fileHead(path string, n int) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, n)
	m, _ := io.ReadFull(f, buf)
	return buf[:m]
}

// profileHint is added to the error for a file analyze cannot read as a
// profile when the file is a heap dump.
func profileHint(head []byte) string {
	if bytes.HasPrefix(head, []byte(heapDumpHeader)) {
		return "; this is a Go heap dump: use ctxleak holders"
	}
	return ""
}

// dumpHint is added to the error for a file holders cannot read as a heap
// dump when the file is a pprof profile.
func dumpHint(path string) string {
	if path == stdinName {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := profile.Parse(io.LimitReader(f, profiles.DefaultMaxBytes)); err == nil {
		return "; this is a pprof profile: use ctxleak analyze"
	}
	return ""
}

// urlHint is added to the error for a profile file that does not exist
// when its name looks like a URL without its scheme,
// "localhost:6060/debug/pprof/heap".
func urlHint(source string) string {
	if _, err := os.Stat(source); err == nil || profiles.IsURL(source) {
		return ""
	}
	host, path, ok := strings.Cut(source, "/")
	if !ok || host == "" || strings.HasPrefix(source, ".") {
		return ""
	}
	if strings.Contains(host, ":") || strings.HasPrefix(path, "debug/pprof") {
		return fmt.Sprintf("; for a URL, give its scheme: http://%s", source)
	}
	return ""
}
