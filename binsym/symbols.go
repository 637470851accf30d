package binsym

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
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
	syms, err := b.elf.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		return &symtab{byName: map[string]int{}}, nil
	}
	if err != nil {
		return nil, err
	}
	writable := make([]bool, len(b.elf.Sections))
	for i, s := range b.elf.Sections {
		writable[i] = s.Flags&elf.SHF_ALLOC != 0 && s.Flags&elf.SHF_WRITE != 0 && s.Flags&elf.SHF_EXECINSTR == 0
	}
	t := &symtab{byName: make(map[string]int, len(syms))}
	for _, s := range syms {
		typ := elf.ST_TYPE(s.Info)
		if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || typ == elf.STT_FILE || typ == elf.STT_SECTION || typ == elf.STT_TLS {
			continue
		}
		if int(s.Section) >= len(b.elf.Sections) {
			t.noteCorrupt(fmt.Sprintf("%s in section %d of %d", s.Name, s.Section, len(b.elf.Sections)))
			continue
		}
		if sec := b.elf.Sections[s.Section]; s.Size > 0 && sec.Flags&elf.SHF_ALLOC != 0 &&
			(s.Value < sec.Addr || s.Value-sec.Addr > sec.Size || s.Size > sec.Size-(s.Value-sec.Addr)) {
			t.noteCorrupt(fmt.Sprintf("%s of %d bytes at %#x, past its section %s [%#x, %#x)", s.Name, s.Size, s.Value, sec.Name, sec.Addr, sec.Addr+sec.Size))
			continue
		}
		e := elfSym{name: s.Name, addr: s.Value, size: s.Size}
		t.all = append(t.all, e)
		if int(s.Section) < len(writable) && writable[s.Section] && typ == elf.STT_OBJECT && s.Size > 0 && !isStaticTemp(s.Name) {
			t.global = append(t.global, e)
		}
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
// module's itablinks; in read-only data, with their Type filled in by a
// relocation in a PIE). Itabs built at run time live in persistent memory
// that only the dump's itab records describe, and ItabType returns false
// for them, as for any address that is not a static itab.
func (b *Binary) ItabType(itabAddr uint64) (uint64, bool) {
	a := b.toLink(itabAddr)
	if t, err := b.symbols(); err == nil && len(t.all) > 0 {
		s, ok := containing(t.all, a)
		if !ok || s.addr != a || !strings.HasPrefix(s.name, "go:itab.") {
			return 0, false
		}
	} else if !b.itabLinks()[a] {
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

// itabLinks returns the link addresses of the static itabs, from the
// module's itablinks: how ItabType recognizes an itab without a symbol
// table.
func (b *Binary) itabLinks() map[uint64]bool {
	b.itabOnce.Do(func() {
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
