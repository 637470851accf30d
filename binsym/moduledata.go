package binsym

import (
	"debug/elf"
	"encoding/binary"
	"slices"
)

// Words of runtime.moduledata (runtime/symtab.go), the same from Go 1.20
// to 1.27: what comes before them has not changed. mdLayout gives the
// later words.
const (
	mdFuncnametab = 1  // funcnametab slice: pointer, length, capacity
	mdMinPC       = 20 // minpc: the first function's entry
)

// moduledataText finds the module data of a stripped executable and
// returns the text start from it: its minpc minus the first function's
// offset in the function table.
func (b *Binary) moduledataText(t *pclntab) (uint64, bool) {
	m, ok := b.findModuledata(t)
	if !ok {
		return 0, false
	}
	entry0 := uint64(binary.LittleEndian.Uint32(t.functab))
	text := b.moduledataWord(m, mdMinPC) - entry0
	s := b.sectionAt(text)
	return text, s != nil && s.Flags&elf.SHF_EXECINSTR != 0
}

// findModuledata returns the link address of runtime.firstmoduledata: the
// symbol, or in a stripped executable the word in writable data that
// points to the pclntab t and is followed by the funcnametab slice.
func (b *Binary) findModuledata(t *pclntab) (uint64, bool) {
	if t == nil {
		return 0, false
	}
	if m, ok := b.linkSymbol("runtime.firstmoduledata"); ok {
		return m, true
	}
	le := binary.LittleEndian
	funcnames := t.addr + le.Uint64(t.data[8+8*3:])
	isModuledata := func(m uint64) bool { return b.moduledataWord(m, mdFuncnametab) == funcnames }
	if b.pie {
		// The pointer is filled in by a relocation.
		var cands []uint64
		for off, add := range b.relatives() {
			if add == t.addr && isModuledata(off) {
				cands = append(cands, off)
			}
		}
		if len(cands) == 0 {
			return 0, false
		}
		return slices.Min(cands), true
	}
	for _, s := range b.elf.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_WRITE == 0 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for i := 0; i+8 <= len(data); i += 8 {
			if le.Uint64(data[i:]) == t.addr && isModuledata(s.Addr+uint64(i)) {
				return s.Addr + uint64(i), true
			}
		}
	}
	return 0, false
}

// moduledataAddr returns the link address of the module data, found once.
func (b *Binary) moduledataAddr() (uint64, bool) {
	b.mdOnce.Do(func() { b.md, b.mdOK = b.findModuledata(b.pcln) })
	return b.md, b.mdOK
}

// A linkTable is one of the module's tables of links: its link address and
// number of entries.
type linkTable struct{ addr, n uint64 }

// moduleTables returns the module's typelinks (int32 offsets of the
// unnamed types' descriptors from the types section) and itablinks
// (pointers to the static itabs). They are read from the module data,
// where they follow the textsectmap slice, which follows epclntab where
// the module data has it; or, without module data, from the sections the
// Go linker makes (an external linker merges them into others). Go 1.27
// has neither: typesRegions gives what replaced them.
func (b *Binary) moduleTables() (typelinks, itablinks linkTable) {
	if m, ok := b.moduledataAddr(); ok {
		l := b.mdLayout(m)
		if l.typedesclen != 0 {
			return linkTable{}, linkTable{}
		}
		i := l.epclntab
		if end := b.pcln.addr + uint64(len(b.pcln.data)); b.moduledataWord(m, i) == end {
			i++
		}
		t, ok1 := b.moduledataSlice(m, i+3, 4)
		it, ok2 := b.moduledataSlice(m, i+6, 8)
		if ok1 && ok2 {
			return t, it
		}
	}
	section := func(size uint64, names ...string) linkTable {
		for _, name := range names {
			if s := b.elf.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
				return linkTable{s.Addr, s.Size / size}
			}
		}
		return linkTable{}
	}
	return section(4, ".typelink", ".data.rel.ro.typelink"), section(8, ".itablink", ".data.rel.ro.itablink")
}

// moduledataSlice returns the slice whose header is at word i of the module
// data m, with elements of size bytes. It fails unless the length equals
// the capacity and the elements are in one section.
func (b *Binary) moduledataSlice(m uint64, i int, size uint64) (linkTable, bool) {
	p, n, c := b.moduledataWord(m, i), b.moduledataWord(m, i+1), b.moduledataWord(m, i+2)
	if n == 0 && c == 0 {
		return linkTable{}, true
	}
	s := b.sectionAt(p)
	if n != c || s == nil || s.Type == elf.SHT_NOBITS || n > (s.Size-(p-s.Addr))/size {
		return linkTable{}, false
	}
	return linkTable{p, n}, true
}

// moduledataWord returns the word i of the module data at link address m,
// or 0.
func (b *Binary) moduledataWord(m uint64, i int) uint64 {
	return b.linkWord(m + 8*uint64(i))
}
