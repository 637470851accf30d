package main

import (
	"bytes"
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
		return copyDump(f, a.stdin, limit)
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
}

func (e *dumpStreamError) Error() string {
	if e.head != nil && len(e.head) == 0 {
		return "empty, not a Go heap dump"
	}
	if e.head != nil {
		return fmt.Sprintf("not a Go heap dump: it starts with %q, not %q%s", e.head, heapDumpHeader, streamHint(e.head))
	}
	return fmt.Sprintf("the dump is over --max-dump-size %s", bytesize.Compact(bytesize.Size(e.limit)))
}

// streamHint says what a stream that is not a heap dump looks like.
func streamHint(head []byte) string {
	if bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
		return " (gzip data: decompress it first, or use ctxleak analyze for a profile)"
	}
	return ""
}

// copyDump copies a heap dump from src to dst: it checks the header first,
// then copies at most limit bytes in all and returns a *dumpStreamError if
// there are more.
func copyDump(dst io.Writer, src io.Reader, limit int64) error {
	head := make([]byte, len(heapDumpHeader))
	n, err := io.ReadFull(src, head)
	if string(head[:n]) != heapDumpHeader {
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return err
		}
		return &dumpStreamError{head: head[:n]}
	}
	if _, err := dst.Write(head); err != nil {
		return err
	}
	copied, err := io.Copy(dst, io.LimitReader(src, limit-int64(n)+1))
	if err != nil {
		return err
	}
	if int64(n)+copied > limit {
		return &dumpStreamError{limit: limit}
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
		hint := kindHint(err)
		if hint == "" {
			hint = limitHint(err)
		}
		return nil, usageErrorf("%v%s", err, hint)
	}
	return p, nil
}

// kindHint is added to the error for an input analyze refused, from its
// first bytes, as a heap dump: what reads it instead.
func kindHint(err error) string {
	var hd *profiles.HeapDumpError
	switch {
	case !errors.As(err, &hd):
		return ""
	case hd.Gzipped:
		return ": decompress it and use ctxleak holders"
	}
	return ": use ctxleak holders"
}

// maxHintBytes bounds a file dumpHint parses as a profile, and what the
// file decompresses to: the hint must not cost more than the error it
// explains (a 100 KB gzip file can hold a profile that takes seconds and
// hundreds of MB to decode).
const maxHintBytes = 4 << 20

// dumpHint is added to the error for a file holders cannot read as a heap
// dump when the file is a pprof profile. A file that starts as a heap dump
// is one, however malformed; only a small file is parsed as a profile.
func dumpHint(path string) string {
	if path == stdinName {
		return ""
	}
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return ""
	}
	head := make([]byte, len(heapDumpHeader))
	n, _ := io.ReadFull(f, head)
	f.Close()
	if string(head[:n]) == heapDumpHeader || fi.Size() > maxHintBytes {
		return ""
	}
	// The Loader bounds the bytes read and the memory of decoding them. A
	// profile too costly to decode under that bound has passed the checks
	// of its shape: it is one too.
	_, err = (&profiles.Loader{MaxBytes: maxHintBytes}).Load(context.Background(), path)
	var le *profiles.LimitError
	if err == nil || errors.As(err, &le) && le.Limit != profiles.LimitSize {
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
