package main

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// sparseCases are dumps whose records claim sizes that the file holds, but
// in a hole: an 8 GiB object (alone, and holding another object on a
// goroutine's stack, so that the report describes it), a 1 GiB frame,
// 1 GiB segments, a 1 GiB function name, type name and root description.
// Zeros end the field lists and the dump. Their targets are computed from
// the bytes the files take on disk, a few KiB each: what the records claim
// must be read in bounded windows, or refused, never allocated.
func sparseCases(a *assets) ([]Case, error) {
	d := filepath.Join(a.dir, "sparse")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, err
	}
	var cases []Case
	var firstErr error
	add := func(name string, path string, err error, want []int, extra ...string) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
		cases = append(cases, Case{Cat: "sparse", Name: name, Args: append([]string{"holders", path}, extra...),
			Want: want, Kind: holdersKind, Input: onDisk(path)})
	}
	any := []int{0, 1, 2}
	ok := []int{0, 1}

	e := params()
	e.U(tagObject, arena, 8<<30)
	p, err := sparse(filepath.Join(d, "object-8g.heapdump"), e.B, int64(len(e.B))+8<<30+2, nil)
	add("object-8g", p, err, any)
	// The 8 GiB object points to an 8-byte one at its first word, and a
	// goroutine's frame points to it: the report's "made of" re-reads it.
	const big = 8 << 30
	e = params()
	e.U(tagObject, arena, big)
	e.B = append(e.B, le(arena+big)...)
	tail := (&dumptest.Encoder{}).U(1, 0, 0) // its field list: a pointer at 0
	object(tail, arena+big, []uint64{0}, nil)
	goroutine(tail, 1, 0, 0)
	frame(tail, 0, "main.hold", le(arena), []uint64{0})
	tail.U(tagEOF)
	p, err = sparse(filepath.Join(d, "object-8g-held.heapdump"), e.B, int64(len(e.B))+big-8+int64(len(tail.B)), tail.B)
	add("object-8g-held", p, err, ok, "--min-size", "1")
	add("object-8g-held-json", p, err, ok, "--min-size", "1", "--format", "json", "--top", "0")

	e = params()
	goroutine(e, 1, 0, 0)
	e.U(tagStackFrame, 0xc000100000, 0, 0, 1<<30)
	p, err = sparse(filepath.Join(d, "frame-1g.heapdump"), e.B, int64(len(e.B))+1<<30+7, nil)
	add("frame-1g", p, err, any)

	// A data and a bss segment of 1 GiB each.
	e = params()
	e.U(tagData, 0x500000, 1<<30)
	tail = (&dumptest.Encoder{}).U(0, tagBSS, 0x50000000, 1<<30)
	p, err = sparse(filepath.Join(d, "segments-1g.heapdump"), e.B, int64(len(e.B))+1<<30+int64(len(tail.B))+1<<30+2, nil)
	if err == nil {
		err = writeAt(p, tail.B, int64(len(e.B))+1<<30)
	}
	add("segments-1g", p, err, any)
	// Five data segments of 1 GiB, one after the other: the parser
	// refuses the second.
	e = params()
	at := int64(len(e.B))
	p, err = sparse(filepath.Join(d, "data-1g-x5.heapdump"), e.B, at+5*(1<<30+16)+1, nil)
	for i := range int64(5) {
		rec := (&dumptest.Encoder{}).U(tagData, 0x500000+uint64(i)<<31, 1<<30).B
		if err == nil {
			err = writeAt(p, rec, at)
		}
		at += int64(len(rec)) + 1<<30 + 1 // contents, then a 0 ending the field list
	}
	add("data-1g-x5", p, err, any)

	// Three million other roots, 3 bytes each, past an 8 GiB object in a
	// hole: the memory the records take is bounded by the bytes the file
	// holds, not by its apparent size.
	e = params()
	e.U(tagObject, arena, big)
	at = int64(len(e.B)) + big
	roots := (&dumptest.Encoder{}).U(0)
	for i := range uint64(3_000_000) {
		roots.U(tagOtherRoot).S(nil).U(arena + (i%1000)*8)
	}
	roots.U(tagEOF)
	p, err = sparse(filepath.Join(d, "roots-after-8g.heapdump"), e.B, at+int64(len(roots.B)), roots.B)
	add("roots-after-8g", p, err, any, "--min-size", "1")

	// A function name, a type name and a root description of 1 GiB.
	e = params()
	goroutine(e, 1, 0, 0)
	e.U(tagStackFrame, 0xc000100000, 0, 0).S(nil).U(0, 0, 0, 1<<30)
	p, err = sparse(filepath.Join(d, "funcname-1g.heapdump"), e.B, int64(len(e.B))+1<<30+2, nil)
	add("funcname-1g", p, err, any)
	e = params()
	e.U(tagOtherRoot, 1<<30)
	p, err = sparse(filepath.Join(d, "rootdesc-1g.heapdump"), e.B, int64(len(e.B))+1<<30+2, nil)
	add("rootdesc-1g", p, err, any)
	e = params()
	e.U(tagMemProf, 0x1000, 16, 1000, 1<<30)
	p, err = sparse(filepath.Join(d, "memprof-name-1g.heapdump"), e.B, int64(len(e.B))+1<<30+2, nil)
	add("memprof-name-1g", p, err, any)
	// 32 GiB of hole after the params: read as one end-of-dump record
	// and bytes after it.
	p, err = sparse(filepath.Join(d, "hole-32g.heapdump"), params().B, 32<<30, nil)
	add("hole-32g", p, err, nil)
	return cases, firstErr
}

// onDisk returns the bytes the file at path takes on disk (its size for a
// file with no holes), 0 if it cannot be read.
func onDisk(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return min(s.Blocks*512, st.Size())
	}
	return st.Size()
}
