package binsym

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// A Symbol is an ELF symbol: a function, a global variable, an itab
// (go:itab.*context.valueCtx,context.Context), a type descriptor or other
// linker data.
type Symbol struct {
	Name string
	Addr uint64 // run-time address
	Size uint64
	// Type is the run-time address of a global variable's type
	// descriptor (see TypeAt), 0 when unknown: a symbol table does not
	// give it, but a program that names its own globals can (see
	// heap.Globals), for an executable without DWARF.
	Type uint64
}

// symtab holds the executable's sized symbols sorted by address.
type symtab struct {
	all    []elfSym // sized symbols, by address
	global []elfSym // symbols in writable data sections, by address
	byName map[string]int

	corrupt      int    // symbols left out: in no section, or past the end of theirs
	firstCorrupt string // the first of them, described
}

type elfSym struct {
	name string
	addr uint64 // link address
	size uint64
}

func (b *Binary) symbols() (*symtab, error) {
	b.symOnce.Do(func() {
		b.syms, b.symErr = b.readSymbols()
	})
	return b.syms, b.symErr
}

func (b *Binary) readSymbols() (*symtab, error) {
	t := &symtab{byName: map[string]int{}}
	writable := make([]bool, len(b.elf.Sections))
	for i, s := range b.elf.Sections {
		writable[i] = s.Flags&elf.SHF_ALLOC != 0 && s.Flags&elf.SHF_WRITE != 0 && s.Flags&elf.SHF_EXECINSTR == 0
	}
	err := b.readSymtab(func(s elfSymbol) {
		typ := elf.ST_TYPE(s.info)
		if s.section == elf.SHN_UNDEF || s.section >= elf.SHN_LORESERVE || typ == elf.STT_FILE || typ == elf.STT_SECTION || typ == elf.STT_TLS {
			return
		}
		if int(s.section) >= len(b.elf.Sections) {
			t.noteCorrupt(fmt.Sprintf("%s in section %d of %d", s.name, s.section, len(b.elf.Sections)))
			return
		}
		if sec := b.elf.Sections[s.section]; s.size > 0 && sec.Flags&elf.SHF_ALLOC != 0 &&
			(s.value < sec.Addr || s.value-sec.Addr > sec.Size || s.size > sec.Size-(s.value-sec.Addr)) {
			t.noteCorrupt(fmt.Sprintf("%s of %d bytes at %#x, past its section %s [%#x, %#x)", s.name, s.size, s.value, sec.Name, sec.Addr, sec.Addr+sec.Size))
			return
		}
		e := elfSym{name: s.name, addr: s.value, size: s.size}
		t.all = append(t.all, e)
		if int(s.section) < len(writable) && writable[s.section] && typ == elf.STT_OBJECT && s.size > 0 && !isStaticTemp(s.name) {
			t.global = append(t.global, e)
		}
	})
	if errors.Is(err, elf.ErrNoSymbols) {
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	sortSyms(t.all)
	sortSyms(t.global)
	for i, s := range t.all {
		if _, dup := t.byName[s.name]; !dup {
			t.byName[s.name] = i
		}
	}
	return t, nil
}

// maxSymbols is the most entries a symbol table may have, and
// maxSymbolNames the most bytes its string table may: node (C++) has
// 110,000 symbols and 7.5 MB of names, cmd/go 20,000 and 0.7 MB. A bigger
// table is refused rather than read: debug/elf, which read it whole and
// made a Symbol of every entry, took 691 MiB for 4M symbols in an absolute
// section, 1.35 GB for 4M named ones.
const (
	maxSymbols     = 1 << 19
	maxSymbolNames = 32 << 20
)

// elfSymbol is an entry of the symbol table as readSymbols needs it.
type elfSymbol struct {
	name        string
	info        byte
	section     elf.SectionIndex
	value, size uint64
}

// readSymtab calls fn with every entry of the symbol table but the first,
// which is null, in order. It reads the table in steps, and its string
// table once, whole: every name is a part of that one string.
func (b *Binary) readSymtab(fn func(elfSymbol)) error {
	s := b.elf.SectionByType(elf.SHT_SYMTAB)
	if s == nil {
		return elf.ErrNoSymbols
	}
	entSize := uint64(24)
	if b.elf.Class == elf.ELFCLASS32 {
		entSize = 16
	}
	size := s.Size
	if n, ok := compressed(s); ok {
		size = n
	}
	if size%entSize != 0 {
		return fmt.Errorf("section %s: %d bytes, not a multiple of a symbol's %d", s.Name, size, entSize)
	}
	if n := size / entSize; n > maxSymbols {
		return fmt.Errorf("section %s: %d symbols, more than the %d read", s.Name, n, maxSymbols)
	}
	if s.Link == 0 || int(s.Link) >= len(b.elf.Sections) {
		return fmt.Errorf("section %s: string table %d is not a section", s.Name, s.Link)
	}
	strs := b.elf.Sections[s.Link]
	if n, ok := compressed(strs); strs.Size > maxSymbolNames || ok && n > maxSymbolNames {
		return fmt.Errorf("section %s: names in %d bytes, more than the %d read", strs.Name, max(strs.Size, n), maxSymbolNames)
	}
	data, err := b.sectionData(strs)
	if err != nil {
		return err
	}
	names := string(data)
	order := b.elf.ByteOrder
	r := io.LimitReader(s.Open(), int64(size))
	buf := make([]byte, entSize*4096)
	scanned := 0
	for first := true; ; {
		n, err := io.ReadFull(r, buf)
		for e := buf[:uint64(n)/entSize*entSize]; len(e) > 0; e = e[entSize:] {
			if first {
				first = false
				continue
			}
			var sym elfSymbol
			var at uint32
			if entSize == 24 {
				at, sym.info, sym.section = order.Uint32(e), e[4], elf.SectionIndex(order.Uint16(e[6:]))
				sym.value, sym.size = order.Uint64(e[8:]), order.Uint64(e[16:])
			} else {
				at, sym.value, sym.size = order.Uint32(e), uint64(order.Uint32(e[4:])), uint64(order.Uint32(e[8:]))
				sym.info, sym.section = e[12], elf.SectionIndex(order.Uint16(e[14:]))
			}
			if int64(at) < int64(len(names)) {
				// The bytes scanned for names are counted: a linker's names
				// overlap little if at all, while corrupt ones could make
				// every symbol scan the whole table.
				if i := strings.IndexByte(names[at:], 0); i < 0 {
					scanned += len(names) - int(at) // no end: no name, as debug/elf has it
				} else {
					scanned += i + 1
					sym.name = names[at : int(at)+i]
				}
				if scanned > 2*len(names)+1<<20 {
					return fmt.Errorf("section %s: names overlap far more than a linker's would", strs.Name)
				}
			}
			fn(sym)
		}
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			if uint64(n)%entSize != 0 {
				return readPartError(s.Name, io.ErrUnexpectedEOF)
			}
			return nil
		case err != nil:
			return readPartError(s.Name, err)
		}
	}
}

// isStaticTemp reports whether name is that of a compiler's static
// temporary, "main..stmp_2": the value `var x = &T{}` makes, which the
// linker names when it links externally (a cgo program) and leaves unnamed
// otherwise. It is no global of the program's: Statics names it after the
// global that points to it.
func isStaticTemp(name string) bool { return strings.Contains(name, "..stmp_") }

// noteCorrupt counts a symbol left out of the table as corrupt.
func (t *symtab) noteCorrupt(what string) {
	if t.corrupt == 0 {
		t.firstCorrupt = what
	}
	t.corrupt++
}

// sortSyms orders symbols by address, larger first among equal addresses so
// that a sized symbol wins over a zero-sized marker at the same place.
func sortSyms(s []elfSym) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].addr != s[j].addr {
			return s[i].addr < s[j].addr
		}
		return s[i].size > s[j].size
	})
}

// containing returns the symbol of s that holds the link address a.
func containing(s []elfSym, a uint64) (elfSym, bool) {
	i := sort.Search(len(s), func(i int) bool { return s[i].addr > a }) - 1
	// Step back over zero-sized markers and symbols that end before a: a
	// few at most, since Go's symbols do not nest.
	for k := 0; i >= 0 && k < 8; i, k = i-1, k+1 {
		if s[i].size > 0 && a-s[i].addr < s[i].size {
			return s[i], true
		}
		if s[i].size > 0 {
			break
		}
	}
	return elfSym{}, false
}

func (b *Binary) export(s elfSym) Symbol {
	return Symbol{Name: s.name, Addr: b.toRun(s.addr), Size: s.size}
}

// Symbol returns the sized ELF symbol that holds addr: a function, a global,
// an itab, or other linker data. It returns false without a symbol table.
func (b *Binary) Symbol(addr uint64) (Symbol, bool) {
	t, err := b.symbols()
	if err != nil {
		return Symbol{}, false
	}
	s, ok := containing(t.all, b.toLink(addr))
	if !ok {
		return Symbol{}, false
	}
	return b.export(s), true
}

// Global returns the global variable that holds addr: a sized data object
// in a writable data section (.data, .bss, .noptrdata, .noptrbss), so that a
// root slot in a dump's data or bss segment can be named, e.g. main.cache.
// Addr is the variable's start: addr-Addr is the offset of the slot in it.
func (b *Binary) Global(addr uint64) (Symbol, bool) {
	t, err := b.symbols()
	if err != nil {
		return Symbol{}, false
	}
	s, ok := containing(t.global, b.toLink(addr))
	if !ok {
		return Symbol{}, false
	}
	return b.export(s), true
}

// LookupSymbol returns the symbol named name.
func (b *Binary) LookupSymbol(name string) (Symbol, bool) {
	t, err := b.symbols()
	if err != nil {
		return Symbol{}, false
	}
	i, ok := t.byName[name]
	if !ok {
		return Symbol{}, false
	}
	return b.export(t.all[i]), true
}

// linkSymbol returns the link address of the symbol named name.
func (b *Binary) linkSymbol(name string) (uint64, bool) {
	t, err := b.symbols()
	if err != nil {
		return 0, false
	}
	i, ok := t.byName[name]
	if !ok {
		return 0, false
	}
	return t.all[i].addr, true
}

// ItabType returns the type descriptor address in the itab at itabAddr (the
// first word of a non-empty interface), read from the executable: the
// abi.ITab layout is {Inter *InterfaceType; Type *Type; Hash uint32; Fun
// [1]uintptr}, so Type is the word at offset 8. It works for the itabs the
// linker laid out (go:itab.* symbols, or without a symbol table the
// module's itablinks; from Go 1.27, which gives them no symbol, the itabs
// at the end of the types section; in read-only data, with their Type
// filled in by a relocation in a PIE). Itabs built at run time live in
// persistent memory that only the dump's itab records describe, and
// ItabType returns false for them, as for any address that is not a
// static itab.
func (b *Binary) ItabType(itabAddr uint64) (uint64, bool) {
	a := b.toLink(itabAddr)
	if !b.itabLinks()[a] && !b.itabSymbol(a) {
		return 0, false
	}
	buf, ok := b.readLink(a+8, 8)
	if !ok {
		return 0, false
	}
	typ := binary.LittleEndian.Uint64(buf)
	if typ == 0 && b.pie {
		typ = b.relative(a + 8)
	}
	if typ == 0 {
		return 0, false
	}
	return b.toRun(typ), true
}

// itabSymbol reports whether a go:itab.* symbol starts at the link
// address a.
func (b *Binary) itabSymbol(a uint64) bool {
	t, err := b.symbols()
	if err != nil || len(t.all) == 0 {
		return false
	}
	s, ok := containing(t.all, a)
	return ok && s.addr == a && strings.HasPrefix(s.name, "go:itab.")
}

// itabLinks returns the link addresses of the static itabs, from the
// module's itablinks: how ItabType recognizes an itab without a symbol
// table.
func (b *Binary) itabLinks() map[uint64]bool {
	b.itabOnce.Do(func() {
		if itabs, ok := b.staticItabs127(); ok {
			b.itabs = itabs
			return
		}
		b.itabs = map[uint64]bool{}
		_, t := b.moduleTables()
		data, ok := b.readLink(t.addr, int(8*t.n))
		if !ok {
			return
		}
		for i := range t.n {
			a := binary.LittleEndian.Uint64(data[8*i:])
			if a == 0 && b.pie {
				a = b.relative(t.addr + 8*i)
			}
			if a != 0 {
				b.itabs[a] = true
			}
		}
	})
	return b.itabs
}

// relative returns the addend of the R_*_RELATIVE dynamic relocation that
// fills the word at link address a in a PIE, or 0.
func (b *Binary) relative(a uint64) uint64 { return b.relatives()[a] }

// relatives returns the RELATIVE relocations of a PIE: link address ->
// addend.
func (b *Binary) relatives() map[uint64]uint64 {
	b.relaOnce.Do(func() {
		b.rela = map[uint64]uint64{}
		typ := uint32(elf.R_X86_64_RELATIVE)
		if b.arch == "arm64" {
			typ = uint32(elf.R_AARCH64_RELATIVE)
		}
		le := binary.LittleEndian
		for _, s := range b.elf.Sections {
			if s.Type != elf.SHT_RELA {
				continue
			}
			data, err := s.Data()
			if err != nil {
				continue
			}
			for ; len(data) >= 24; data = data[24:] {
				off, info, add := le.Uint64(data), le.Uint64(data[8:]), le.Uint64(data[16:])
				if uint32(info) == typ {
					b.rela[off] = add
				}
			}
		}
	})
	return b.rela
}
