package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/inputfile"
	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/ctxleak/ctxleak/profiles"
)

// stdinName is the file name that stands for standard input or output.
const stdinName = "-"

// heapDumpHeader starts every file runtime/debug.WriteHeapDump writes.
const heapDumpHeader = "go1.7 heap dump\n"

// checkInputs refuses, before anything opens them, input files that are
// not regular files: a named pipe would block the open until a writer
// comes, a device would be read forever. flag names the flag that gave
// the paths, "" for arguments. "-" and URLs pass; a missing file is left to
// the code that opens it, which reports it in its own words.
func checkInputs(flag string, paths ...string) error {
	for _, path := range paths {
		if path == "" || path == stdinName || isURL(path) || profiles.IsURL(path) {
			continue
		}
		var nr *inputfile.NotRegularError
		if err := inputfile.Check(path); errors.As(err, &nr) {
			if flag != "" {
				return usageErrorf("--%s %v", flag, err)
			}
			return usageErrorf("%v", err)
		}
	}
	return nil
}

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
// that removes it. Input that does not start as a heap dump is refused
// from its first bytes, and input longer than limit (--max-dump-size) when
// it gets there: an endless stream never fills the disk.
func (a *app) spoolStdin(ctx context.Context, limit int64) (path string, remove func(), err error) {
	if f, ok := a.stdin.(*os.File); ok && ui.IsTerminal(f) {
		return "", func() {}, usageErrorf("- reads the dump from standard input, which is a terminal: pipe or redirect a dump in")
	}
	f, err := os.CreateTemp("", "ctxleak-stdin-*.heapdump")
	if err != nil {
		return "", func() {}, usageErrorf("spooling standard input: %v", err)
	}
	remove = func() { os.Remove(f.Name()) }
	err = await(ctx, func() error {
		return copyDump(f, a.stdin, limit, -1)
	})
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		remove()
		var de *dumpStreamError
		switch {
		case ctx.Err() != nil:
			return "", func() {}, err
		case errors.As(err, &de):
			return "", func() {}, usageErrorf("-: %v", err)
		}
		return "", func() {}, usageErrorf("spooling standard input to %s: %v", f.Name(), err)
	}
	return f.Name(), remove, nil
}

// dumpStreamError is a streamed dump (standard input, a download) refused
// while it is copied: it does not start as a heap dump, or it is longer
// than the limit.
type dumpStreamError struct {
	head  []byte // the first bytes, when they are not a dump's header
	limit int64  // the limit passed, when the stream is too long
	size  int64  // the size the server declared, or -1
}

func (e *dumpStreamError) Error() string {
	if e.head != nil && len(e.head) == 0 {
		return "empty, not a Go heap dump"
	}
	if e.head != nil {
		return fmt.Sprintf("not a Go heap dump: it starts with %q, not %q%s", e.head, heapDumpHeader, headHint(e.head))
	}
	if e.size >= 0 {
		return fmt.Sprintf("the dump is %s, over --max-dump-size %s", bytesize.Format(e.size), bytesize.Compact(bytesize.Size(e.limit)))
	}
	return fmt.Sprintf("the dump is over --max-dump-size %s", bytesize.Compact(bytesize.Size(e.limit)))
}

// copyDump copies a heap dump from src to dst: it checks the header first,
// then the size the source declared (-1: none), then copies at most limit
// bytes in all and returns a *dumpStreamError if there are more.
func copyDump(dst io.Writer, src io.Reader, limit, declared int64) error {
	head := make([]byte, len(heapDumpHeader))
	n, err := io.ReadFull(src, head)
	if string(head[:n]) != heapDumpHeader {
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return err
		}
		return &dumpStreamError{head: head[:n], size: -1}
	}
	if declared > limit {
		return &dumpStreamError{limit: limit, size: declared}
	}
	if _, err := dst.Write(head); err != nil {
		return err
	}
	copied, err := io.Copy(dst, io.LimitReader(src, limit-int64(n)+1))
	if err != nil {
		return err
	}
	if int64(n)+copied > limit {
		return &dumpStreamError{limit: limit, size: -1}
	}
	return nil
}

// readStdinProfile reads a pprof profile from standard input, within the
// loader's limits.
func (a *app) readStdinProfile(ctx context.Context, loader *profiles.Loader) (*profiles.Profile, error) {
	if f, ok := a.stdin.(*os.File); ok && ui.IsTerminal(f) {
		return nil, usageErrorf("- reads a profile from standard input, which is a terminal: pipe or redirect a profile in")
	}
	var p *profiles.Profile
	err := await(ctx, func() error {
		var err error
		p, err = loader.Read(stdinName, a.stdin)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		if re := heapDumpRefusal(err); re != nil {
			return nil, re
		}
		return nil, usageErrorf("%v%s", err, limitHint(err))
	}
	return p, nil
}

// heapDumpRefusal returns the usage error for an input analyze refused,
// from its first bytes, as a heap dump, saying what reads it; or nil.
func heapDumpRefusal(err error) error {
	var hd *profiles.HeapDumpError
	var pe *profiles.Error
	switch {
	case !errors.As(err, &hd) || !errors.As(err, &pe):
		return nil
	case hd.Gzipped:
		return usageErrorf("%s: not a pprof profile; this is a gzipped Go heap dump: decompress it and use ctxleak holders", pe.Source)
	}
	return usageErrorf("%s: not a pprof profile; this is a Go heap dump: use ctxleak holders", pe.Source)
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
