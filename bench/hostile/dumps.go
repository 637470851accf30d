package main

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// Record tags, as in src/runtime/heapdump.go.
const (
	tagEOF = iota
	tagObject
	tagOtherRoot
	tagType
	tagGoroutine
	tagStackFrame
	tagParams
	tagFinalizer
	tagItab
	tagOSThread
	tagMemStats
	tagQueuedFinalizer
	tagData
	tagBSS
	tagDefer
	tagPanic
	tagMemProf
	tagAllocSample
)

const arena uint64 = 0xc000000000

// params returns an encoder with the header and a little-endian 64-bit
// params record whose arenas span 64 GiB.
func params() *dumptest.Encoder {
	return dumptest.NewEncoder().U(tagParams, 0, 8, arena, arena+64<<30).S([]byte("amd64")).S([]byte("go1.26.0")).U(2)
}

// goroutine appends a goroutine record with id.
func goroutine(e *dumptest.Encoder, id uint64, deferAddr, panicAddr uint64) {
	e.U(tagGoroutine, 0xc000001000+id*0x100, 0xc000100000, id, 0x401000, 4, 0, 0, 0).S([]byte("chan receive")).U(0, 0, deferAddr, panicAddr)
}

// frame appends a stack frame record of size bytes of zeros.
func frame(e *dumptest.Encoder, depth uint64, name string, contents []byte, ptrs []uint64) {
	e.U(tagStackFrame, 0xc000100000+depth*0x100, depth, 0).S(contents).U(0x401000, 0x401010, 0x401010).S([]byte(name)).Fields(ptrs)
}

// object appends an object record at addr whose words are the given values.
func object(e *dumptest.Encoder, addr uint64, words []uint64, ptrs []uint64) {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	e.U(tagObject, addr).S(b).Fields(ptrs)
}

func dumpCases(a *assets) ([]Case, error) {
	d := filepath.Join(a.dir, "dumps")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, err
	}
	var cases []Case
	var firstErr error
	add := func(name string, path string, err error, want []int, extra ...string) {
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", name, err)
		}
		cases = append(cases, Case{Cat: "dump", Name: name, Args: append([]string{"holders", path}, extra...),
			Want: want, Kind: holdersKind, Input: size(path)})
	}
	file := func(name string, b []byte, want []int, extra ...string) {
		p, err := write(d, name+".heapdump", b)
		add(name, p, err, want, extra...)
	}
	any := []int{0, 1, 2}
	ok := []int{0, 1}
	base, err := os.ReadFile(a.dump)
	if err != nil {
		return nil, err
	}

	file("empty", nil, nil)
	file("header-only", []byte(dumptest.Header), nil)
	rng := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 1<<20)
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	file("header-junk", append([]byte(dumptest.Header), junk...), nil)
	file("varint-overflow", append(params().B, bytes.Repeat([]byte{0xff}, 11)...), nil)
	file("gzipped-dump", gz(base), nil)
	file("real", base, ok, "--binary", a.exe)
	file("real-nobinary", base, ok)
	for i, frac := range []float64{0.001, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999} {
		file(fmt.Sprintf("trunc-%d", i), base[:int(float64(len(base))*frac)], nil, "--binary", a.exe)
	}
	for i := range 12 {
		b := bytes.Clone(base)
		for range 1 + i {
			b[16+rng.IntN(len(b)-16)] ^= byte(1 + rng.IntN(255))
		}
		file(fmt.Sprintf("flip-%d", i), b, any, "--binary", a.exe)
	}

	// Lengths past the end of a small file, in every length field.
	for name, e := range map[string]*dumptest.Encoder{
		"len-object": params().U(tagObject, arena, 1<<62),
		"len-frame": func() *dumptest.Encoder {
			e := params()
			goroutine(e, 1, 0, 0)
			return e.U(tagStackFrame, 0, 0, 0, 1<<62)
		}(),
		"len-data":             params().U(tagData, 0x500000, 1<<62),
		"len-string":           params().U(tagType, 0x1000, 8, 1<<62),
		"len-memprof":          params().U(tagMemProf, 0x1000, 16, 1<<62),
		"len-wait":             params().U(tagGoroutine, 1, 2, 3, 4, 5, 0, 0, 0, 1<<62),
		"len-fields":           params().U(tagObject, arena, 8, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1<<62),
		"params-twice":         params().U(tagParams, 0, 8, arena, arena+64<<30).S([]byte("amd64")).S([]byte("go1.26.0")).U(2, tagEOF),
		"params-none":          dumptest.NewEncoder().U(tagObject, arena, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, tagEOF),
		"arena-huge":           dumptest.NewEncoder().U(tagParams, 0, 8, 0, 1<<63).S(nil).S(nil).U(2).U(tagObject, 1<<62, 8, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, tagEOF),
		"ptrsize-4-huge-arena": dumptest.NewEncoder().U(tagParams, 0, 4, 0, 1<<40).S(nil).S(nil).U(2).U(tagEOF),
		"big-endian":           dumptest.NewEncoder().U(tagParams, 1, 8, arena, arena+1<<30).S([]byte("s390x")).S([]byte("go1.26.0")).U(2).U(tagEOF),
		"ncpu-huge":            dumptest.NewEncoder().U(tagParams, 0, 8, arena, arena+1<<30).S(nil).S(nil).U(1 << 62).U(tagEOF),
	} {
		file(name, e.B, any)
	}

	// Many records of each kind: a few MB of file each.
	const many = 1_000_000
	type rec func(e *dumptest.Encoder, i uint64)
	for _, k := range []struct {
		name string
		rec  rec
	}{
		{"otherroots", func(e *dumptest.Encoder, i uint64) { e.U(tagOtherRoot).S([]byte("r")).U(arena + (i%1000)*8) }},
		{"finalizers", func(e *dumptest.Encoder, i uint64) {
			e.U(tagFinalizer, arena+(i%1000)*8, arena, 0x401000, 0x1000, 0x1000)
		}},
		{"qfinalizers", func(e *dumptest.Encoder, i uint64) {
			e.U(tagQueuedFinalizer, arena+(i%1000)*8, arena, 0x401000, 0x1000, 0x1000)
		}},
		{"types", func(e *dumptest.Encoder, i uint64) { e.U(tagType, 0x1000+i*8, 1<<40).S([]byte("T")).U(1) }},
		{"itabs", func(e *dumptest.Encoder, i uint64) { e.U(tagItab, 0x1000+i*8, 0x1000+(i+1)*8) }},
		{"threads", func(e *dumptest.Encoder, i uint64) { e.U(tagOSThread, i, i, i) }},
		{"defers", func(e *dumptest.Encoder, i uint64) {
			e.U(tagDefer, 0x2000+i*8, 0xc000001100, 0xc000100000, 0x401000, arena, 0x401000, 0x2000+(i+1)*8)
		}},
		{"panics", func(e *dumptest.Encoder, i uint64) {
			e.U(tagPanic, 0x2000+i*8, 0xc000001100, 0x1000, arena, 0, 0x2000+(i+1)*8)
		}},
		{"buckets", func(e *dumptest.Encoder, i uint64) {
			e.U(tagMemProf, 0x1000+i*8, 16, 1).S([]byte("f")).S([]byte("x.go")).U(1, 1, 0)
		}},
		{"samples", func(e *dumptest.Encoder, i uint64) { e.U(tagAllocSample, arena+(i%1000)*8, 0x1000+i%7) }},
		{"goroutines", func(e *dumptest.Encoder, i uint64) { goroutine(e, i, 0, 0) }},
		{"memstats", func(e *dumptest.Encoder, i uint64) {
			if i == 0 {
				e.U(tagMemStats)
				for range 24 + 256 + 1 {
					e.U(1 << 62)
				}
			}
		}},
	} {
		e := params()
		// 1000 objects of 8 bytes that the records can point at.
		for i := range uint64(1000) {
			object(e, arena+i*8, []uint64{arena + ((i+1)%1000)*8}, []uint64{0})
		}
		goroutine(e, 1, 0x2000, 0x2000)
		frame(e, 0, "main.f", make([]byte, 8), nil)
		for i := range uint64(many) {
			k.rec(e, i)
		}
		e.U(tagEOF)
		file("many-"+k.name, e.B, any, "--min-size", "1")
	}
	// Memory profile buckets of the runtime's full depth, 1024 frames.
	{
		e := params()
		for i := range uint64(20_000) {
			e.U(tagMemProf, 0x1000+i*8, 16, 1024)
			for range 1024 {
				e.S([]byte("f")).S([]byte("x.go")).U(1)
			}
			e.U(1, 0)
		}
		e.U(tagEOF)
		file("buckets-deep", e.B, any)
	}
	// Defer and panic links that form cycles, and a goroutine whose
	// first defer is the cycle.
	{
		e := params()
		object(e, arena, []uint64{arena}, []uint64{0})
		goroutine(e, 1, 0x2000, 0x3000)
		frame(e, 0, "main.f", make([]byte, 8), nil)
		e.U(tagDefer, 0x2000, 0xc000001100, 0xc000100000, 0x401000, arena, 0x401000, 0x2008)
		e.U(tagDefer, 0x2008, 0xc000001100, 0xc000100000, 0x401000, arena, 0x401000, 0x2000)
		e.U(tagPanic, 0x3000, 0xc000001100, 0x1000, arena, 0, 0x3000)
		e.U(tagFinalizer, arena, arena, 0x401000, 0x1000, 0x1000)
		e.U(tagItab, 0x1000, 0x1000)
		e.U(tagEOF)
		file("cycles-defer-panic", e.B, any, "--min-size", "1")
	}
	// One goroutine with 1M zero-size frames and 1M defers: frames x
	// defers must not be quadratic.
	{
		e := params()
		object(e, arena, []uint64{0}, nil)
		goroutine(e, 1, 0x2000, 0)
		for i := range uint64(many) {
			e.U(tagStackFrame, 0xc000100000, i, 0).S(nil).U(0x401000, 0x401010, 0x401010).S([]byte("main.f")).Fields(nil)
		}
		for i := range uint64(many) {
			e.U(tagDefer, 0x2000+i*8, 0xc000001100, 0xc000100000, 0x401000, arena, 0x401000, 0x2000+(i+1)*8)
		}
		e.U(tagEOF)
		file("frames-x-defers", e.B, any, "--min-size", "1")
		file("frames-x-defers-binary", e.B, any, "--min-size", "1", "--binary", a.exe)
	}
	// Graph shapes: a 2M-object ring held by a frame, a star in and a
	// star out, a 3M-object list, objects that overlap or repeat.
	{
		const n = 2_000_000
		e := params()
		for i := range uint64(n) {
			object(e, arena+i*16, []uint64{arena + ((i+1)%n)*16, 0}, []uint64{0})
		}
		goroutine(e, 1, 0, 0)
		frame(e, 0, "main.ring", le(arena), []uint64{0})
		e.U(tagEOF)
		file("ring-2m", e.B, any, "--min-size", "1")
		e = params()
		for i := range uint64(n) {
			object(e, arena+i*16, []uint64{arena + 16*n, 0}, []uint64{0})
		}
		object(e, arena+16*n, []uint64{0}, nil)
		goroutine(e, 1, 0, 0)
		ptrs := make([]uint64, 0, 4096)
		words := make([]uint64, 0, 4096)
		for i := range uint64(4096) {
			ptrs = append(ptrs, i*8)
			words = append(words, arena+i*16*(n/4096))
		}
		frame(e, 0, "main.star", le(words...), ptrs)
		e.U(tagEOF)
		file("star-in-2m", e.B, any, "--min-size", "1")
		e = params()
		words = make([]uint64, n)
		ptrs = make([]uint64, n)
		for i := range uint64(n) {
			words[i] = arena + 16*n + 16 + i*16
			ptrs[i] = i * 8
		}
		object(e, arena, words, ptrs)
		for i := range uint64(n) {
			object(e, arena+16*n+16+i*16, []uint64{arena, 0}, []uint64{0})
		}
		goroutine(e, 1, 0, 0)
		frame(e, 0, "main.star", le(arena), []uint64{0})
		e.U(tagEOF)
		file("star-out-2m", e.B, any, "--min-size", "1")
		e = params()
		const ln = 3_000_000
		for i := range uint64(ln) {
			next := uint64(0)
			if i+1 < ln {
				next = arena + (i+1)*16
			}
			object(e, arena+i*16, []uint64{next, 0}, []uint64{0})
		}
		goroutine(e, 1, 0, 0)
		frame(e, 0, "main.list", le(arena), []uint64{0})
		e.U(tagEOF)
		file("list-3m", e.B, any, "--min-size", "1")
		file("list-3m-maxpath-huge", e.B, any, "--min-size", "1", "--max-path-steps", "100000000")
		file("list-3m-json", e.B, any, "--min-size", "1", "--format", "json", "--max-path-steps", "0")
		e = params()
		for range 1000 {
			object(e, arena+8, []uint64{arena + 8, arena}, []uint64{0, 8})
			object(e, arena, []uint64{arena, arena + 8, arena + 16}, []uint64{0, 8, 16})
		}
		goroutine(e, 1, 0, 0)
		frame(e, 0, "main.dup", le(arena+8), []uint64{0})
		e.U(tagEOF)
		file("overlapping-objects", e.B, any, "--min-size", "1")
	}
	// Text from the dump that must be escaped: function names, wait
	// reasons, root descriptions, type names, memprof names, GOARCH and
	// version strings.
	{
		evil := []byte("main.\x1b[31mred\x1b[0m\r\n::error::forged\u202eevil\xff")
		e := dumptest.NewEncoder().U(tagParams, 0, 8, arena, arena+64<<30).S(evil).S(evil).U(2)
		object(e, arena, make([]uint64, 1<<17), nil)
		e.U(tagType, 0x1000, 8).S(evil).U(1)
		e.U(tagGoroutine, 0xc000001000, 0xc000100000, 1, 0x401000, 4, 0, 0, 0).S(evil).U(0, 0, 0, 0)
		frame(e, 0, string(evil), le(arena), []uint64{0})
		e.U(tagOtherRoot).S(evil).U(arena)
		e.U(tagMemProf, 0x1000, 1<<20, 2).S(evil).S(evil).U(1).S(evil).S(evil).U(2).U(1, 0)
		e.U(tagAllocSample, arena, 0x1000)
		e.U(tagEOF)
		for _, f := range []string{"text", "json"} {
			file("evil-text-"+f, e.B, any, "--min-size", "1", "--format", f, "--max-path-steps", "2")
		}
		file("evil-text-binary", e.B, any, "--min-size", "1", "--binary", a.exe)
		// The real dump with its function names replaced by evil ones.
		recs, err := dumptest.Walk(base)
		if err == nil {
			e := &dumptest.Encoder{B: []byte(dumptest.Header)}
			for _, r := range recs {
				switch r.Tag {
				case tagStackFrame:
					r.Fields[7].S = append([]byte(nil), evil...)
				case tagGoroutine:
					r.Fields[8].S = append([]byte(nil), evil...)
				case tagMemProf:
					for i := range r.Fields[2].Stack {
						r.Fields[2].Stack[i][0] = string(evil)
					}
				}
				e.Record(r)
			}
			file("evil-real", e.B, any, "--min-size", "1", "--binary", a.exe)
			file("evil-real-nobinary", e.B, any, "--min-size", "1")
		} else if firstErr == nil {
			firstErr = err
		}
	}
	// A real 1M-node list with a chain of 2000 objects of 64 KiB.
	cases = append(cases,
		Case{Cat: "dump", Name: "real-list1m", Args: []string{"holders", a.longList, "--binary", a.exe, "--min-size", "64KiB"}, Want: ok, Kind: holdersKind, Input: size(a.longList)},
		Case{Cat: "dump", Name: "real-list1m-top0", Args: []string{"holders", a.longList, "--binary", a.exe, "--min-size", "1", "--top", "0", "--format", "json"}, Want: ok, Kind: holdersKind, Input: size(a.longList)},
		Case{Cat: "dump", Name: "real-list1m-paths", Args: []string{"holders", a.longList, "--binary", a.exe, "--max-path-steps", "2000000"}, Want: ok, Kind: holdersKind, Input: size(a.longList)},
	)
	// 100,000 goroutines, each with a stack object and a defer record: the
	// stack objects a defer's closure reaches are found per goroutine, not
	// by a scan of every defer for every goroutine.
	cases = append(cases,
		Case{Cat: "dump", Name: "real-deferrers100k", Args: []string{"holders", a.deferrers, "--binary", a.exe}, Want: ok, Kind: holdersKind, Input: size(a.deferrers)},
	)
	// Every object described, on shapes that made that quadratic: 80,000
	// goroutines whose sudogs chain through one wait queue (each walked
	// back through the whole queue for its other roots), and 80,000 timers
	// in the runtime's timer heap (each path read all its fields).
	for _, d := range []struct{ name, dump string }{{"labelled80k", a.labelled}, {"timeouts80k", a.timeouts}} {
		cases = append(cases,
			Case{Cat: "dump", Name: "real-" + d.name, Args: []string{"holders", d.dump, "--binary", a.exe}, Want: ok, Kind: holdersKind, Input: size(d.dump)},
			Case{Cat: "dump", Name: "real-" + d.name + "-all", Args: []string{"holders", d.dump, "--binary", a.exe, "--min-size", "1", "--top", "0", "--format", "json"}, Want: ok, Kind: holdersKind, Input: size(d.dump)},
		)
	}
	return cases, firstErr
}

// le returns the words little-endian.
func le(words ...uint64) []byte {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return b
}

// gz returns b gzipped.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// writeAt writes b at off in the file at path.
func writeAt(path string, b []byte, off int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(b, off)
	return err
}

// contentCases keep the records of the real dump intact, so that its
// executable still matches it, and overwrite words of object contents,
// frames and segments with pointers chosen to mislead the analysis: into
// other objects and their middles, into the executable's read-only data
// (type descriptors and itabs are read from there), into its code
// (closures are named from code pointers), and random words.
func contentCases(a *assets) ([]Case, error) {
	d := filepath.Join(a.dir, "contents")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, err
	}
	base, err := os.ReadFile(a.dump)
	if err != nil {
		return nil, err
	}
	recs, err := dumptest.Walk(base)
	if err != nil {
		return nil, err
	}
	f, err := elf.Open(a.exe)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ranges [][2]uint64
	for _, name := range []string{".rodata", ".text", ".typelink", ".noptrdata", ".data", ".bss", ".gopclntab"} {
		if s := f.Section(name); s != nil {
			ranges = append(ranges, [2]uint64{s.Addr, s.Addr + s.Size})
		}
	}
	// Where each kind of record keeps its contents: object 1, frame 3,
	// data and bss 1 (the field index of the contents).
	type region struct{ off, n int64 }
	var objs, frames, segs []region
	var addrs []uint64
	for _, r := range recs {
		switch r.Tag {
		case tagObject:
			c := r.Fields[1]
			objs = append(objs, region{c.Off + int64(uvarintLen(uint64(len(c.S)))), int64(len(c.S))})
			addrs = append(addrs, r.Fields[0].U)
		case tagStackFrame:
			c := r.Fields[3]
			frames = append(frames, region{c.Off + int64(uvarintLen(uint64(len(c.S)))), int64(len(c.S))})
		case tagData, tagBSS:
			c := r.Fields[1]
			segs = append(segs, region{c.Off + int64(uvarintLen(uint64(len(c.S)))), int64(len(c.S))})
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	word := func(kind int) uint64 {
		switch kind {
		case 0: // an object, or its middle
			return addrs[rng.IntN(len(addrs))] + uint64(rng.IntN(4))*8
		case 1: // the executable's sections
			r := ranges[rng.IntN(len(ranges))]
			return (r[0] + uint64(rng.Int64N(int64(r[1]-r[0])))) &^ 7
		case 2: // the same object as the last one: cycles
			return addrs[len(addrs)/2]
		default:
			return rng.Uint64()
		}
	}
	var cases []Case
	for i := range 48 {
		b := bytes.Clone(base)
		kind := i % 4
		pool := [][]region{objs, frames, segs}[i/4%3]
		for range 1 + rng.IntN(2000) {
			r := pool[rng.IntN(len(pool))]
			if r.n < 8 {
				continue
			}
			o := r.off + 8*rng.Int64N(r.n/8)
			binary.LittleEndian.PutUint64(b[o:], word(kind))
		}
		name := fmt.Sprintf("words-%s-%d", []string{"objects", "frames", "segments"}[i/4%3], i)
		p, err := write(d, name+".heapdump", b)
		if err != nil {
			return nil, err
		}
		format := []string{"text", "json", "pprof"}[i%3]
		out := "-"
		if format == "pprof" {
			out = p + ".pb.gz"
		}
		cases = append(cases, Case{Cat: "contents", Name: name, Args: []string{"holders", p, "--binary", a.exe, "--min-size", "1", "--top", "0", "--format", format, "-o", out, "--force"},
			Want: []int{0, 1}, Kind: holdersKind, Input: size(p)})
	}
	return cases, nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
