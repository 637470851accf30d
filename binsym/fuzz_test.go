package binsym

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"flag"
	"os"
	"testing"
)

// FuzzOpen reads mutated executables and looks up functions, symbols,
// types and segments in them: none may panic, hang or allocate from a
// length the file does not back. An input that starts as an ELF file does
// is the executable; any other input is a list of patches to the test
// program that TestMain builds (seed), with symbols and DWARF or without:
// a flag byte (bit 0: the stripped build; bit 1: types from the runtime
// type descriptors even with DWARF, as indexing the DWARF of the seed
// takes a tenth of a second), then patches of an offset (4
// bytes, little-endian, modulo the file's size), a length byte and that
// many bytes. The fuzzer's inputs stay small, and most of a mutated one is
// a real executable, so its mutations reach the tables deep inside.
//
//	go test -run '^$' -fuzz FuzzOpen ./binsym
func FuzzOpen(f *testing.F) {
	var seeds [2][]byte
	for i, path := range []string{TestExe, TestStrippedExe} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		seeds[i] = data
	}
	// Seed patches: a byte of each section header, and of the first bytes
	// of each section's contents.
	ef, err := elf.NewFile(bytes.NewReader(seeds[0]))
	if err != nil {
		f.Fatal(err)
	}
	for flag := range byte(4) {
		f.Add([]byte{flag})
	}
	shoff := binary.LittleEndian.Uint64(seeds[0][0x28:])
	// Each seed parses a whole executable, about 20 ms under -race: when
	// go test only runs the seeds (no -fuzz), every fourth section's
	// patches stand for the rest; the fuzzer gets them all.
	step := 4
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		step = 1
	}
	for i, s := range ef.Sections {
		if i%step != 0 {
			continue
		}
		// Elf64_Shdr: the offset (24) and size (32) of section i.
		for _, field := range []uint64{24, 32} {
			p := binary.LittleEndian.AppendUint32([]byte{2}, uint32(shoff+64*uint64(i)+field))
			f.Add(append(p, 3, 0xff, 0xff, 0x0f))
		}
		for _, flag := range []byte{2, 3} {
			p := []byte{flag}
			p = binary.LittleEndian.AppendUint32(p, uint32(s.Offset)+uint32(i%8))
			p = append(p, 4, 0xff, 0xff, 0xff, 0x7f)
			f.Add(p)
		}
	}
	// Seed patches of main.addrTaken's stack-object records: a huge count,
	// and each field of its record overwritten.
	if b, err := newBinary("seed", bytes.NewReader(seeds[0]), int64(len(seeds[0])), nil, nil); err == nil {
		if off, ok := stackObjectsFileOffset(b, "main.addrTaken"); ok {
			for _, field := range []uint32{0, 8, 12, 16, 20} {
				p := binary.LittleEndian.AppendUint32([]byte{0}, uint32(off)+field)
				f.Add(append(p, 4, 0xf0, 0xff, 0xff, 0x7f))
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		data := in
		if !bytes.HasPrefix(in, []byte("\x7fELF")) {
			data = patch(seeds, in)
		}
		b, err := newBinary("fuzz", bytes.NewReader(data), int64(len(data)), nil, nil)
		if err != nil {
			return
		}
		b.forceDesc = len(in) > 0 && in[0]&2 != 0
		exercise(b)
	})
}

// stackObjectsFileOffset returns the file offset of the stack-object
// records (their count first) of the function named name.
func stackObjectsFileOffset(b *Binary, name string) (uint64, bool) {
	fn, ok := b.FuncByName(name)
	if !ok {
		return 0, false
	}
	f, ok := b.pcln.findFunc(b.toLink(fn.Entry))
	if !ok {
		return 0, false
	}
	off, ok := f.funcdata(funcdataStackObjects)
	gofunc, ok2 := b.gofunc()
	if !ok || !ok2 {
		return 0, false
	}
	a := gofunc + uint64(off)
	s := b.sectionAt(a)
	if s == nil {
		return 0, false
	}
	return s.Offset + a - s.Addr, true
}

// patch applies the patches of in to a copy of one of the seeds.
func patch(seeds [2][]byte, in []byte) []byte {
	if len(in) == 0 {
		return seeds[0]
	}
	data := bytes.Clone(seeds[in[0]&1])
	for p := in[1:]; len(p) >= 5; {
		off := int(binary.LittleEndian.Uint32(p) % uint32(len(data)))
		n := min(int(p[4]), len(p)-5)
		copy(data[off:], p[5:5+n])
		p = p[5+n:]
	}
	return data
}

// exercise calls every lookup of b on addresses and names taken from b
// itself.
func exercise(b *Binary) {
	b.Missing()
	b.LoadTypes()
	b.MatchGoVersion("go1.26.0")
	var entries []uint64
	for _, name := range []string{"main.main", "runtime.gopark", "main.wait", "runtime.main", "main.addrTaken"} {
		fn, ok := b.FuncByName(name)
		if !ok {
			continue
		}
		entries = append(entries, fn.Entry)
		b.BiasFor(name, fn.Entry)
		b.NewFrameMatcher().Match(name, fn.Entry, fn.Entry+5)
		b.NewFrameMatcher().Match(name, fn.Entry+1, 0)
		b.ClosureType(fn.Entry)
	}
	for _, s := range b.Statics() {
		b.StaticType(s)
	}
	for _, e := range entries {
		b.ArgsType(e)
		for _, d := range []uint64{0, 1, 17, 64} {
			b.Func(e + d)
			b.CallSite(e + d)
			b.Frames(e + d)
			b.ArgsSize(e + d)
		}
		objs, _ := b.StackObjects(e)
		for i := range objs {
			for range objs[i].Pointers() {
			}
			b.StackObjectVar(e, &objs[i], 64)
		}
		for _, cfa := range []int64{-8, -72, 16} {
			b.FrameVar(e, e+17, cfa)
		}
	}
	b.FuncsWithPrefix("runtime.", 4)
	b.ReadData(0, 8)
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
			b.ContainingType(t, 8, 48, []uint64{0, 8})
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

// FuzzDWARFTypes builds every type of a mutated DWARF unit: types that
// contain or define themselves, broken references and truncated entries
// must end without a panic. The input is the unit's .debug_abbrev and
// .debug_info, the first byte giving the abbreviations' length; the seed
// is the unit of TestCorruptDWARFTypes.
//
//	go test -run '^$' -fuzz FuzzDWARFTypes ./binsym
func FuzzDWARFTypes(f *testing.F) {
	u := corruptDWARFUnit(8)
	binary.LittleEndian.PutUint32(u.info, uint32(len(u.info)-4))
	f.Add(append(append([]byte{byte(len(testAbbrev))}, testAbbrev...), u.info...))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || int(in[0]) > len(in)-1 {
			return
		}
		abbrev, info := in[1:1+int(in[0])], in[1+int(in[0]):]
		if checkDWARFUnits(info, abbrev) != nil {
			return
		}
		d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, nil)
		if err != nil {
			return
		}
		x := &typeIndex{d: d, r: d.Reader(), built: map[dwarf.Offset]*Type{}, closures: map[uint64]*Type{}, budget: 4*len(info) + 64} // readBudget's constant makes fuzzing slow
		p := walkUnits(d, info, abbrev, 0, 0)
		walkUnits(d, info, nil, 0, 0)
		if p.err != nil {
			return
		}
		for off := range len(info) {
			if t := x.get(dwarf.Offset(off)); t != nil {
				t.PointerAt(8)
				t.DirectIface()
			}
		}
	})
}
