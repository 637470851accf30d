package binsym

import (
	"bytes"
	"os"
	"testing"
)

// FuzzOpen reads mutated executables and looks up functions, symbols,
// types and segments in them: none may panic, hang or allocate from a
// length the file does not back. The seeds are the test program TestMain
// builds, with and without symbols and DWARF.
//
//	go test -run '^$' -fuzz FuzzOpen ./binsym
func FuzzOpen(f *testing.F) {
	for _, path := range []string{TestExe, TestStrippedExe} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := newBinary("fuzz", bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			return
		}
		exercise(b)
	})
}

// exercise calls every lookup of b on addresses and names taken from b
// itself.
func exercise(b *Binary) {
	b.Missing()
	b.LoadTypes()
	b.MatchGoVersion("go1.26.0")
	var entries []uint64
	for _, name := range []string{"main.main", "runtime.gopark", "main.wait", "runtime.main"} {
		fn, ok := b.FuncByName(name)
		if !ok {
			continue
		}
		entries = append(entries, fn.Entry)
		b.BiasFor(name, fn.Entry)
		b.MatchFunc(name, fn.Entry)
		b.MatchFunc(name, fn.Entry+1)
		b.ClosureType(fn.Entry)
	}
	for _, e := range entries {
		for _, d := range []uint64{0, 1, 17, 64} {
			b.Func(e + d)
			b.CallSite(e + d)
			b.Frames(e + d)
			b.ArgsSize(e + d)
		}
	}
	for _, kind := range []SegmentKind{DataSegment, BSSSegment} {
		if lo, hi, _, ok := b.segment(kind); ok && hi >= lo && hi-lo < 1<<26 {
			b.MatchSegment(kind, b.toRun(lo), hi-lo, nil)
			b.MatchSegment(kind, b.toRun(lo), hi-lo, []uint64{0, 8, 4096})
		}
	}
	for _, name := range []string{"main.cache", "runtime.firstmoduledata", "runtime.allp"} {
		if s, ok := b.LookupSymbol(name); ok {
			b.Symbol(s.Addr)
			b.Global(s.Addr + s.Size/2)
			b.GlobalType(name)
			b.ItabType(s.Addr)
		}
	}
	for _, name := range []string{"main.Upload", "context.valueCtx", "map[string]context.Context", "[]uint8", "runtime.g"} {
		if t := b.TypeByName(name); t != nil {
			if a, ok := b.TypeAddr(t); ok {
				b.TypeAt(a)
			}
			t.PointerAt(8)
			t.DirectIface()
			t.IfacePointee()
		}
	}
	if x := b.dwarfTypes(); x != nil {
		n := 0
		for rt := range x.byRT {
			if n++; n > 50 {
				break
			}
			b.TypeAt(b.toRun(x.types + rt))
		}
	}
	if d := b.descIndex(); d != nil {
		b.TypeByName("no such type") // decodes every descriptor
	}
}
