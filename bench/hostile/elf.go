package main

import (
	"bytes"
	"compress/zlib"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
)

// binaryCases give the real dump a --binary that is not its executable,
// or its executable corrupted: ELF headers, section and segment sizes,
// compressed sections with lying sizes, symbol tables, the pclntab and
// DWARF made to contain itself.
func binaryCases(a *assets) ([]Case, error) {
	d := filepath.Join(a.dir, "binaries")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, err
	}
	any := []int{0, 1, 2}
	in := size(a.dump)
	var cases []Case
	add := func(name, bin string, want []int, extra ...string) {
		cases = append(cases, Case{Cat: "binary", Name: name, Args: append([]string{"holders", a.dump, "--binary", bin}, extra...),
			Want: want, Kind: holdersKind, Input: in})
	}
	script, err := write(d, "script.sh", []byte("#!/bin/sh\necho hello\n"))
	if err != nil {
		return nil, err
	}
	add("dump-as-binary", a.dump, nil)
	add("script", script, nil)
	add("darwin", a.darwin, nil)
	add("windows", a.windows, nil)
	add("arm64", a.arm64, nil)
	add("386", a.i386, nil)
	add("stripped", a.stripped, nil)
	add("pie", a.pie, nil)
	add("cgo", a.cgo, nil)
	add("other-build", a.exeB, nil)
	cases = append(cases, Case{Cat: "binary", Name: "other-build-dump", Args: []string{"holders", a.dumpB, "--binary", a.exe}, Kind: holdersKind, Input: size(a.dumpB), Mention: a.exe})
	add("self", a.exe, []int{0, 1})
	for _, x := range a.arches {
		add(filepath.Base(x), x, nil)
	}
	if goTool, err := exec.LookPath("go"); err == nil {
		add("go-tool", goTool, nil)
	}
	if self, err := os.Executable(); err == nil {
		add("hostile-itself", self, nil)
	}
	add("ctxleak-itself", *ctxleak, nil)
	cases = append(cases,
		Case{Cat: "binary", Name: "pie-self", Args: []string{"holders", a.pieDump, "--binary", a.pie}, Want: any, Kind: holdersKind, Input: size(a.pieDump)},
		Case{Cat: "binary", Name: "stripped-self", Args: []string{"holders", a.strippedDump, "--binary", a.stripped}, Want: any, Kind: holdersKind, Input: size(a.strippedDump)},
		Case{Cat: "binary", Name: "rawdwarf-self", Args: []string{"holders", a.rawDWARFDump, "--binary", a.rawDWARF, "--min-size", "1", "--top", "0"}, Want: []int{0, 1}, Kind: holdersKind, Input: size(a.rawDWARFDump)},
	)

	exe, err := os.ReadFile(a.exe)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		return nil, err
	}
	mut := func(name string, fn func(b []byte) []byte) {
		b := fn(bytes.Clone(exe))
		p, err := write(d, name, b)
		if err != nil {
			panic(err)
		}
		os.Chmod(p, 0o700)
		add(name, p, any, "--min-size", "1")
	}
	put64 := func(b []byte, off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }
	put32 := func(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }
	put16 := func(b []byte, off int, v uint16) { binary.LittleEndian.PutUint16(b[off:], v) }
	phoff := int(binary.LittleEndian.Uint64(exe[0x20:]))
	sh := func(name string) int { return sectionHeader(exe, f, name) }
	// ELF header fields.
	mut("e_shoff-huge", func(b []byte) []byte { put64(b, 0x28, 1<<62); return b })
	mut("e_shnum-max", func(b []byte) []byte { put16(b, 0x3c, 0xffff); return b })
	mut("e_shnum-0", func(b []byte) []byte { put16(b, 0x3c, 0); return b })
	mut("e_shstrndx-bad", func(b []byte) []byte { put16(b, 0x3e, 0xfffe); return b })
	mut("e_phnum-max", func(b []byte) []byte { put16(b, 0x38, 0xffff); return b })
	mut("e_phoff-huge", func(b []byte) []byte { put64(b, 0x20, 1<<62); return b })
	mut("truncated-half", func(b []byte) []byte { return b[:len(b)/2] })
	mut("truncated-64", func(b []byte) []byte { return b[:64] })
	for i := range f.Progs {
		mut(fmt.Sprintf("phdr%d-filesz-huge", i), func(b []byte) []byte {
			put64(b, phoff+56*i+32, 1<<62)
			put64(b, phoff+56*i+40, 1<<62)
			return b
		})
	}
	for _, s := range f.Sections[1:] {
		o := sh(s.Name)
		mut("sec"+s.Name+"-size-huge", func(b []byte) []byte { put64(b, o+32, 1<<40); return b })
		mut("sec"+s.Name+"-offset-huge", func(b []byte) []byte { put64(b, o+24, 1<<62); return b })
		mut("sec"+s.Name+"-size-0", func(b []byte) []byte { put64(b, o+32, 0); return b })
		mut("sec"+s.Name+"-overlap", func(b []byte) []byte { put64(b, o+24, 0); return b })
	}
	mut("symtab-entsize-0", func(b []byte) []byte { put64(b, sh(".symtab")+56, 0); return b })
	mut("symtab-size-odd", func(b []byte) []byte { put64(b, sh(".symtab")+32, f.Section(".symtab").Size-7); return b })
	mut("symtab-link-self", func(b []byte) []byte { put32(b, sh(".symtab")+40, uint32(len(f.Sections)-3)); return b })
	mut("symbols-huge-sizes", func(b []byte) []byte {
		s := f.Section(".symtab")
		for off := s.Offset + 24; off+24 <= s.Offset+s.Size; off += 24 {
			put64(b, int(off)+8, 1<<62)  // value
			put64(b, int(off)+16, 1<<62) // size
		}
		return b
	})
	mut("symbols-names-bad", func(b []byte) []byte {
		s := f.Section(".symtab")
		for off := s.Offset + 24; off+24 <= s.Offset+s.Size; off += 24 {
			put32(b, int(off), 0xfffffff0)
		}
		return b
	})
	mut("strtab-evil", func(b []byte) []byte {
		s := f.Section(".strtab")
		evil := []byte("\x1b[31m\n::error::forged\u202e")
		for off := s.Offset + 1; off+uint64(len(evil)) < s.Offset+s.Size; off += 97 {
			copy(b[off:], evil)
		}
		return b
	})
	// A symbol table of 4M symbols appended to the file: in an absolute
	// section, which the table leaves out, and in .text, each named apart
	// in an appended string table.
	textIndex := 0
	for i, s := range f.Sections {
		if s.Name == ".text" {
			textIndex = i
		}
	}
	const manySyms = 4 << 20
	for _, named := range []bool{false, true} {
		name := "symtab-4m-absolute"
		if named {
			name = "symtab-4m-named"
		}
		mut(name, func(b []byte) []byte {
			syms := make([]byte, 24, 24*(manySyms+1))
			strs := []byte{0}
			for i := range manySyms {
				var e [24]byte
				e[4] = 0x12 // global function
				binary.LittleEndian.PutUint16(e[6:], 0xfff1)
				if named {
					binary.LittleEndian.PutUint32(e[0:], uint32(len(strs)))
					strs = fmt.Appendf(strs, "s%07d\x00", i)
					binary.LittleEndian.PutUint16(e[6:], uint16(textIndex))
					binary.LittleEndian.PutUint64(e[8:], f.Sections[textIndex].Addr)
				}
				syms = append(syms, e[:]...)
			}
			for _, sd := range []struct {
				name string
				data []byte
			}{{".symtab", syms}, {".strtab", strs}} {
				if sd.name == ".strtab" && !named {
					continue
				}
				put64(b, sh(sd.name)+24, uint64(len(b)))
				put64(b, sh(sd.name)+32, uint64(len(sd.data)))
				b = append(b, sd.data...)
			}
			return b
		})
	}
	// pclntab header (Go 1.20+): magic, pads, minLC, ptrSize, then words.
	pcln := f.Section(".gopclntab").Offset
	mut("pclntab-magic", func(b []byte) []byte { put32(b, int(pcln), 0xdeadbeef); return b })
	for i, field := range []string{"nfunc", "nfiles", "textStart", "funcnameOff", "cuOff", "filetabOff", "pctabOff", "pclnOff"} {
		mut("pclntab-"+field+"-huge", func(b []byte) []byte { put64(b, int(pcln)+8+8*i, 1<<62); return b })
		mut("pclntab-"+field+"-max", func(b []byte) []byte { put64(b, int(pcln)+8+8*i, 0x7fffffff); return b })
	}
	mut("pclntab-ptrsize-3", func(b []byte) []byte { b[pcln+7] = 3; return b })
	mut("pclntab-functab-evil", func(b []byte) []byte {
		// The function table's entries all point at the same funcdata.
		pclnOff := binary.LittleEndian.Uint64(exe[pcln+8+7*8:])
		ft := int(pcln + pclnOff)
		for i := 0; i < 2000; i++ {
			put32(b, ft+8*i+4, 0xfffffff0)
		}
		return b
	})
	// The executable followed by an 8 GiB hole, and with its section
	// headers moved into the hole.
	for i, name := range []string{"sparse-8g-tail", "shoff-in-hole"} {
		b := bytes.Clone(exe)
		if i == 1 {
			put64(b, 0x28, 4<<30)
		}
		p, err := sparse(filepath.Join(d, name), b, int64(len(b))+8<<30, nil)
		if err != nil {
			return nil, err
		}
		add(name, p, any, "--min-size", "1")
	}
	// Section headers past 0xff00 are counted in the first header's size
	// (e_shnum 0): 4M of them, in a hole after the executable.
	{
		b := bytes.Clone(exe)
		end := int64(len(b)+4095) &^ 4095
		put64(b, 0x28, uint64(end))
		put16(b, 0x3c, 0)
		var first [64]byte
		binary.LittleEndian.PutUint64(first[32:], 4<<20) // sh_size: the count
		b = append(b, make([]byte, int(end)-len(b))...)
		b = append(b, first[:]...)
		p, err := sparse(filepath.Join(d, "shnum-4m"), b, end+64<<22, nil)
		if err != nil {
			return nil, err
		}
		add("shnum-4m", p, any, "--min-size", "1")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sec := range []string{".gopclntab", ".symtab", ".typelink", ".rodata", ".noptrdata", ".go.buildinfo", ".debug_info", ".debug_abbrev", ".debug_loclists", ".note.go.buildid"} {
		s := f.Section(sec)
		for i := range 4 {
			mut(fmt.Sprintf("flip%s-%d", sec, i), func(b []byte) []byte {
				for range 1 + 4*i {
					b[s.Offset+uint64(rng.IntN(int(s.FileSize)))] ^= byte(1 + rng.IntN(255))
				}
				return b
			})
		}
	}
	// Compressed DWARF with lying sizes, an unknown compression, and a
	// bomb: a zlib stream of 4 GiB of zeros appended to the file.
	info := sh(".debug_info")
	infoOff := f.Section(".debug_info").Offset
	mut("zdebug-size-huge", func(b []byte) []byte { put64(b, int(infoOff)+8, 1<<62); return b })
	mut("zdebug-size-small", func(b []byte) []byte { put64(b, int(infoOff)+8, 100); return b })
	mut("zdebug-type-bad", func(b []byte) []byte { put32(b, int(infoOff), 99); return b })
	mut("zdebug-type-zstd", func(b []byte) []byte { put32(b, int(infoOff), 2); return b })
	bomb := zlibZeros(4 << 30)
	for _, claim := range []uint64{4 << 30, 1 << 20, 1 << 40} {
		mut(fmt.Sprintf("zdebug-bomb-claims-%d", claim), func(b []byte) []byte {
			off := len(b)
			var chdr [24]byte
			binary.LittleEndian.PutUint32(chdr[0:], 1) // zlib
			binary.LittleEndian.PutUint64(chdr[8:], claim)
			binary.LittleEndian.PutUint64(chdr[16:], 1)
			b = append(b, chdr[:]...)
			b = append(b, bomb...)
			put64(b, info+24, uint64(off))
			put64(b, info+32, uint64(24+len(bomb)))
			return b
		})
	}
	dw, err := dwarfCases(a, d)
	return append(cases, dw...), err
}

// sectionHeader returns the file offset of the header of section name of
// the 64-bit ELF file exe, which f reads.
func sectionHeader(exe []byte, f *elf.File, name string) int {
	shoff := int(binary.LittleEndian.Uint64(exe[0x28:]))
	for i, s := range f.Sections {
		if s.Name == name {
			return shoff + 64*i
		}
	}
	panic("no section " + name)
}

// dwarfCases corrupt the uncompressed DWARF of prog-rawdwarf, whose dump
// is given with it: main.node contains itself, a pointer type points at
// itself, an array has 2^60 elements, a typedef names itself.
func dwarfCases(a *assets, d string) ([]Case, error) {
	exe, err := os.ReadFile(a.rawDWARF)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		return nil, err
	}
	sec := f.Section(".debug_info")
	data, err := f.DWARF()
	if err != nil {
		return nil, err
	}
	// Unit header offsets.
	info, _ := sec.Data()
	var units []uint64
	for off := uint64(0); off+4 <= uint64(len(info)); {
		units = append(units, off)
		off += 4 + uint64(binary.LittleEndian.Uint32(info[off:]))
	}
	type ent struct {
		e        *dwarf.Entry
		off, end dwarf.Offset
	}
	var ents []ent
	r := data.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if n := len(ents); n > 0 {
			ents[n-1].end = e.Offset
		}
		ents = append(ents, ent{e: e, off: e.Offset})
	}
	find := func(tag dwarf.Tag, name string) int {
		for i, x := range ents {
			if x.e.Tag == tag && x.e.Val(dwarf.AttrName) == name {
				return i
			}
		}
		return -1
	}
	// retarget rewrites entry i's reference to old (a ref4 relative to its
	// unit) so that it refers to new.
	retarget := func(b []byte, i int, old, new dwarf.Offset) bool {
		x := ents[i]
		for _, u := range units {
			if uint64(old) < u || uint64(new) < u {
				continue
			}
			want := uint32(uint64(old) - u)
			for p := uint64(x.off); p+4 <= uint64(x.end); p++ {
				if binary.LittleEndian.Uint32(info[p:]) == want {
					binary.LittleEndian.PutUint32(b[sec.Offset+p:], uint32(uint64(new)-u))
					return true
				}
			}
		}
		return false
	}
	var cases []Case
	any := []int{0, 1, 2}
	mut := func(name string, fn func(b []byte) bool) {
		b := bytes.Clone(exe)
		if !fn(b) {
			fmt.Fprintf(os.Stderr, "hostile: dwarf case %s: nothing to change, skipped\n", name)
			return
		}
		p, err := write(d, name, b)
		if err != nil {
			panic(err)
		}
		cases = append(cases, Case{Cat: "dwarf", Name: name, Args: []string{"holders", a.rawDWARFDump, "--binary", p, "--min-size", "1", "--top", "0"},
			Want: any, Kind: holdersKind, Input: size(a.rawDWARFDump)})
	}
	node := find(dwarf.TagStructType, "main.node")
	big := find(dwarf.TagStructType, "main.big")
	ptr := find(dwarf.TagPointerType, "*main.node")
	mut("struct-contains-itself", func(b []byte) bool {
		if node < 0 {
			return false
		}
		ok := false
		for j := node + 1; j < len(ents) && ents[j].e.Tag == dwarf.TagMember; j++ {
			if t, _ := ents[j].e.Val(dwarf.AttrType).(dwarf.Offset); t != 0 {
				ok = retarget(b, j, t, ents[node].off) || ok
			}
		}
		return ok
	})
	mut("big-contains-itself", func(b []byte) bool {
		if big < 0 {
			return false
		}
		j := big + 2 // data [65536]byte
		t, _ := ents[j].e.Val(dwarf.AttrType).(dwarf.Offset)
		return t != 0 && retarget(b, j, t, ents[big].off)
	})
	mut("pointer-to-itself", func(b []byte) bool {
		if ptr < 0 {
			return false
		}
		t, _ := ents[ptr].e.Val(dwarf.AttrType).(dwarf.Offset)
		return t != 0 && retarget(b, ptr, t, ents[ptr].off)
	})
	mut("every-type-ref-to-node", func(b []byte) bool {
		if node < 0 {
			return false
		}
		ok := false
		for j := range ents {
			if t, _ := ents[j].e.Val(dwarf.AttrType).(dwarf.Offset); t != 0 {
				ok = retarget(b, j, t, ents[node].off) || ok
			}
		}
		return ok
	})
	mut("every-type-ref-to-self", func(b []byte) bool {
		ok := false
		for j := range ents {
			if t, _ := ents[j].e.Val(dwarf.AttrType).(dwarf.Offset); t != 0 {
				ok = retarget(b, j, t, ents[j].off) || ok
			}
		}
		return ok
	})
	mut("every-type-ref-to-next", func(b []byte) bool {
		ok := false
		for j := range ents {
			if t, _ := ents[j].e.Val(dwarf.AttrType).(dwarf.Offset); t != 0 && j+1 < len(ents) {
				ok = retarget(b, j, t, ents[j+1].off) || ok
			}
		}
		return ok
	})
	mut("array-counts-huge", func(b []byte) bool {
		ok := false
		for _, x := range ents {
			if x.e.Tag != dwarf.TagSubrangeType {
				continue
			}
			c, _ := x.e.Val(dwarf.AttrCount).(int64)
			if c <= 0 {
				continue
			}
			// The count is the last bytes of the entry, in data1/2/4/8 or udata.
			for p := uint64(x.off) + 1; p < uint64(x.end); p++ {
				if int64(info[p]) == c && p+1 == uint64(x.end) {
					b[sec.Offset+p] = 0x7f
					ok = true
				}
			}
		}
		return ok
	})
	mut("sizes-huge", func(b []byte) bool {
		ok := false
		for _, x := range ents {
			s, _ := x.e.Val(dwarf.AttrByteSize).(int64)
			if s <= 0 || s > 255 {
				continue
			}
			for p := uint64(x.off) + 1; p < uint64(x.end); p++ {
				if int64(info[p]) == s {
					b[sec.Offset+p] = 0xff
					ok = true
					break
				}
			}
		}
		return ok
	})
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 12 {
		mut(fmt.Sprintf("flip-info-%d", i), func(b []byte) bool {
			for range 1 + 8*i {
				b[sec.Offset+uint64(rng.IntN(int(sec.Size)))] ^= byte(1 + rng.IntN(255))
			}
			return true
		})
	}
	// A .debug_info and .debug_abbrev of their own, appended to the file,
	// the section headers pointed at them: one unit of 30M structs each
	// nested in the one before (debug/dwarf's SkipChildren recurses once a
	// level: a stack overflow), and one whose last abbreviation code is cut
	// (debug/dwarf's Reader then returns a null entry for ever,
	// golang/go#79586). Abbreviations: 1 compile unit, 2 struct, both with
	// children and no attributes. Then unit headers and abbreviations that
	// cost debug/dwarf far more than their size.
	unit := func(entries []byte) []byte {
		u := binary.LittleEndian.AppendUint32(nil, uint32(7+len(entries)))
		u = append(u, 4, 0, 0, 0, 0, 0, 8) // version 4, abbrev offset 0, address size 8
		return append(u, entries...)
	}
	abbrev := []byte{1, 0x11, 1, 0, 0, 2, 0x13, 1, 0, 0, 0}
	withInfo := func(name string, info, abbrev []byte) {
		b := bytes.Clone(exe)
		for _, sd := range []struct {
			name string
			data []byte
		}{{".debug_abbrev", abbrev}, {".debug_info", info}} {
			h := sectionHeader(exe, f, sd.name)
			binary.LittleEndian.PutUint64(b[h+24:], uint64(len(b)))       // sh_offset
			binary.LittleEndian.PutUint64(b[h+32:], uint64(len(sd.data))) // sh_size
			b = append(b, sd.data...)
		}
		p, err := write(d, name, b)
		if err != nil {
			panic(err)
		}
		cases = append(cases, Case{Cat: "dwarf", Name: name, Args: []string{"holders", a.rawDWARFDump, "--binary", p, "--min-size", "1", "--top", "0"},
			Want: any, Kind: holdersKind, Input: size(a.rawDWARFDump) + int64(len(b))})
	}
	const levels = 30 << 20
	nested := make([]byte, 1+2*levels+1)
	nested[0] = 1
	for i := 1; i <= levels; i++ {
		nested[i] = 2
	}
	withInfo("nested-30m", unit(nested), abbrev)
	withInfo("abbrev-code-cut", unit([]byte{1, 2, 0, 0x80}), abbrev)
	// 5M empty units (debug/dwarf keeps 80 bytes a unit: 403 MiB), and
	// 200,000 units each naming the next abbreviation of one long table
	// (debug/dwarf parses it from each offset to its end: quadratic).
	var empty []byte
	for range 5_000_000 {
		empty = append(empty, unit(nil)...)
	}
	withInfo("units-5m", empty, abbrev)
	var long, named []byte
	for i := range 200_000 {
		u := unit(nil)
		binary.LittleEndian.PutUint32(u[6:], uint32(len(long)))
		named = append(named, u...)
		long = binary.AppendUvarint(long, uint64(i+1))
		long = append(long, 0x13, 0, 0, 0)
	}
	withInfo("abbrev-tables-overlap", named, append(long, 0))
	// 16M one-byte top-level entries, each with 256 attributes without
	// bytes (flag_present): debug/dwarf decodes them all.
	flags := []byte{1, 0x11, 1, 0, 0, 2, 0x13, 0}
	for range 256 {
		flags = append(flags, 0x3f, 0x19)
	}
	flags = append(flags, 0, 0, 0)
	ones := make([]byte, 1+16<<20+1)
	ones[0] = 1
	for i := 1; i <= 16<<20; i++ {
		ones[i] = 2
	}
	withInfo("attributes-without-bytes", unit(ones), flags)
	// 64M one-byte top-level entries without attributes or children,
	// which debug/dwarf's Reader decodes one at a time.
	leaves := make([]byte, 1+64<<20+1)
	leaves[0] = 1
	for i := 1; i <= 64<<20; i++ {
		leaves[i] = 2
	}
	withInfo("toplevel-64m", unit(leaves), []byte{1, 0x11, 1, 0, 0, 2, 0x13, 0, 0, 0, 0})
	// 21M named base types of three bytes each (code, "a", NUL), which
	// the index keeps by name.
	named3 := make([]byte, 1, 1+3*21<<20+1)
	named3[0] = 1
	for range 21 << 20 {
		named3 = append(named3, 2, 'a', 0)
	}
	named3 = append(named3, 0)
	withInfo("toplevel-named-21m", unit(named3), []byte{1, 0x11, 1, 0, 0, 2, 0x24, 0, 0x03, 0x08, 0, 0, 0})
	// The global main.list typed as a struct of 64M one-byte members:
	// reading the type decodes every member.
	members := []byte{1, 4}
	members = append(members, "main.list"...)
	members = binary.LittleEndian.AppendUint32(append(members, 0), 11+1+15) // the struct, after the header, the unit and the variable
	members = append(members, 2)
	members = append(members, bytes.Repeat([]byte{3}, 64<<20)...)
	members = append(members, 0, 0)
	structAbbrev := []byte{1, 0x11, 1, 0, 0, 2, 0x13, 1, 0, 0, 3, 0x0d, 0, 0, 0, 4, 0x34, 0, 0x03, 0x08, 0x49, 0x13, 0, 0, 5, 0x0d, 1, 0, 0, 0}
	withInfo("struct-members-64m", unit(members), structAbbrev)
	// The same global's struct with one member, inside which 30M more
	// members nest: reading the type decodes them all.
	nestedMembers := append(members[:len(members)-2-64<<20:len(members)-2-64<<20], bytes.Repeat([]byte{5}, 30<<20)...)
	nestedMembers = append(nestedMembers, make([]byte, 30<<20+2)...)
	withInfo("struct-nested-30m", unit(nestedMembers), structAbbrev)
	// The global main.list's struct has 65,536 members, each typed as one
	// of the first 65,536 structs of a chain of 10M, each nested in the one
	// before: every member's type reads 1M entries below it.
	const chain, fields = 10 << 20, 1 << 16
	start := uint32(11 + 1 + 15 + 1 + 5*fields + 1) // the chain's first struct
	chained := []byte{1, 4}
	chained = append(chained, "main.list"...)
	chained = binary.LittleEndian.AppendUint32(append(chained, 0), 11+1+15)
	chained = append(chained, 2)
	for i := range uint32(fields) {
		chained = binary.LittleEndian.AppendUint32(append(chained, 6), start+i)
	}
	chained = append(chained, 0)
	chained = append(chained, bytes.Repeat([]byte{2}, chain)...)
	chained = append(chained, make([]byte, chain+1)...)
	withInfo("struct-member-types-chained", unit(chained), append(structAbbrev[:len(structAbbrev)-1:len(structAbbrev)-1], 6, 0x0d, 0, 0x49, 0x13, 0, 0, 0))
	return cases, nil
}

// zlibZeros returns a zlib stream of n zero bytes.
func zlibZeros(n int64) []byte {
	return compressedZeros(n, func(w io.Writer) io.WriteCloser {
		z, _ := zlib.NewWriterLevel(w, zlib.BestCompression)
		return z
	})
}
