package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"

	"github.com/ctxleak/ctxleak/internal/inputfile"
	"github.com/ctxleak/ctxleak/profiles"
)

// legacyProfileHeads start the legacy text profiles (debug=1), cut to
// fit the first bytes of a stream, len(heapDumpHeader).
var legacyProfileHeads = []string{"heap profile: ", "goroutine profil", "threadcreate pro", "--- mutex:", "--- contention:"}

// headHint says what an input that is not a heap dump is, from its first
// bytes (at least len(heapDumpHeader) of them when there are), and what
// reads it; "" when they do not tell.
func headHint(head []byte) string {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return " (gzip data: decompress it first, or use ctxleak analyze for a profile)"
	case isGoroutineDump(head):
		return "; this is a goroutine dump (debug=2), not a heap dump"
	}
	for _, p := range legacyProfileHeads {
		if bytes.HasPrefix(head, []byte(p)) {
			return "; this is a legacy text pprof profile: use ctxleak analyze"
		}
	}
	return ""
}

// fileKindHint says what a file given where ctxleak wants neither a heap
// dump nor a profile (cost --base) is, from its first bytes, and what
// reads it; "" when they do not tell.
func fileKindHint(f io.ReaderAt) string {
	head := make([]byte, len(heapDumpHeader))
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	if string(head) == heapDumpHeader {
		return "; this is a Go heap dump: use ctxleak holders"
	}
	return headHint(head)
}

// isGoroutineDump reports whether head starts as the text of all
// goroutines' stacks, "goroutine 1 [running]:".
func isGoroutineDump(head []byte) bool {
	rest, ok := bytes.CutPrefix(head, []byte("goroutine "))
	return ok && len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9'
}

// gzipHint says what gzip data is, from its first decompressed bytes, and
// whether it may be a profile.proto, which only parsing tells for sure.
func gzipHint(r io.Reader) (hint string, maybeProfile bool) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return headHint([]byte{0x1f, 0x8b}), false
	}
	head := make([]byte, 64)
	n, _ := io.ReadFull(zr, head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte(heapDumpHeader)):
		return "; this is a gzipped Go heap dump: decompress it first", false
	case headHint(head) != "":
		return "; gzip data holding something else" + headHint(head), false
	case n > 0 && isProfileTag(head[0]):
		return "; this looks like a gzipped pprof profile (profile.proto): use ctxleak analyze", true
	}
	return headHint([]byte{0x1f, 0x8b}), false
}

// isProfileTag reports whether b can be the first byte of profile.proto:
// the tag of one of its fields, 1 to 14, each a varint or bytes.
func isProfileTag(b byte) bool {
	field, wire := b>>3, b&7
	return field >= 1 && field <= 14 && (wire == 0 || wire == 2)
}

// maxHintBytes bounds a file dumpHint parses as a profile, and what the
// file decompresses to: the hint must not cost more than the error it
// explains (a 100 KB gzip file can hold a profile that takes seconds and
// hundreds of MB to decode).
const maxHintBytes = 4 << 20

// dumpHint is added to the error for a file holders cannot read as a heap
// dump: what the file is, told from its first bytes whatever its size
// (gzip data from its first decompressed bytes), and only then, for a
// small file, by parsing it as a profile. A file that starts as a heap
// dump is one, however malformed.
func dumpHint(path string) string {
	if path == stdinName {
		return ""
	}
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, len(heapDumpHeader))
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	hint, maybeProfile := headHint(head), !isGoroutineDump(head)
	switch {
	case string(head) == heapDumpHeader:
		return ""
	case n >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		hint, maybeProfile = gzipHint(io.MultiReader(bytes.NewReader(head), f))
	}
	if maybeProfile && fi.Size() <= maxHintBytes && isProfile(path) {
		return "; this is a pprof profile: use ctxleak analyze"
	}
	return hint
}

// isProfile reports whether the file at path, at most maxHintBytes, reads
// as a pprof profile. The Loader bounds the bytes read and the memory of
// decoding them; a profile too costly to decode under that bound has
// passed the checks of its shape: it is one too.
func isProfile(path string) bool {
	_, err := (&profiles.Loader{MaxBytes: maxHintBytes}).Load(context.Background(), path)
	var le *profiles.LimitError
	return err == nil || errors.As(err, &le) && le.Limit != profiles.LimitSize
}
