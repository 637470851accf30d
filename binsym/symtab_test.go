package binsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// readSymtab gives every symbol debug/elf's Symbols gives, with the same
// name, type, section, value and size, in a 64-bit and a 32-bit file.
func TestReadSymtabMatchesDebugELF(t *testing.T) {
	for _, path := range []string{TestExe, Test386Exe} {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		want, err := f.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		b := &Binary{elf: f, path: path, inflateLimit: 1 << 30}
		var got []elfSymbol
		if err := b.readSymtab(func(s elfSymbol) { got = append(got, s) }); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(got) != len(want) || len(got) < 1000 {
			t.Fatalf("%s: %d symbols, debug/elf gives %d", path, len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.name != w.Name || g.info != w.Info || g.section != w.Section || g.value != w.Value || g.size != w.Size {
				t.Fatalf("%s: symbol %d is %+v, debug/elf gives %+v", path, i, g, w)
			}
		}
	}
}

// A symbol table of more than maxSymbols entries, or whose names take more
// than maxSymbolNames bytes, is refused, not read (4M symbols took
// debug/elf 691 MiB); names that overlap far more than a linker's would
// stop the reading before it turns quadratic.
func TestReadSymtabRefusals(t *testing.T) {
	exe, err := os.ReadFile(TestExe)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(TestExe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	shoff := int(binary.LittleEndian.Uint64(exe[0x28:]))
	header := func(name string) int {
		for i, s := range f.Sections {
			if s.Name == name {
				return shoff + 64*i
			}
		}
		t.Fatalf("no section %s", name)
		return 0
	}
	// place appends data to a copy of exe and points section name at it.
	place := func(b []byte, name string, data []byte) []byte {
		h := header(name)
		binary.LittleEndian.PutUint64(b[h+24:], uint64(len(b)))
		binary.LittleEndian.PutUint64(b[h+32:], uint64(len(data)))
		return append(b, data...)
	}
	read := func(b []byte) error {
		t.Helper()
		p := t.TempDir() + "/exe"
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		g, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		return (&Binary{elf: g, path: p, inflateLimit: 1 << 30}).readSymtab(func(elfSymbol) {})
	}
	// An entry past maxSymbols: absolute symbols without names.
	syms := make([]byte, 24*(maxSymbols+2))
	if err := read(place(exe[:len(exe):len(exe)], ".symtab", syms)); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("%d symbols: error %v", maxSymbols+1, err)
	}
	if err := read(place(exe[:len(exe):len(exe)], ".symtab", syms[:24*maxSymbols])); err != nil {
		t.Errorf("%d symbols: %v", maxSymbols-1, err)
	}
	// Names past maxSymbolNames.
	if err := read(place(exe[:len(exe):len(exe)], ".strtab", make([]byte, maxSymbolNames+1))); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("names of %d bytes: error %v", maxSymbolNames+1, err)
	}
	// 4,096 symbols named by the first byte of 1 MiB of names without a
	// NUL: each would scan it all.
	many := make([]byte, 24*4097)
	for i := 1; i <= 4096; i++ {
		binary.LittleEndian.PutUint16(many[24*i+6:], uint16(elf.SHN_ABS))
	}
	b := place(exe[:len(exe):len(exe)], ".symtab", many)
	b = place(b, ".strtab", append([]byte{0}, strings.Repeat("a", 1<<20)...))
	for i := 1; i <= 4096; i++ {
		binary.LittleEndian.PutUint32(b[len(b)-(1<<20+1)-24*4097+24*i:], 1)
	}
	if err := read(b); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping names: error %v", err)
	}
}

// A first section header that counts more than maxSections headers is
// refused before debug/elf makes a Section of each (4M: 1.1 GB).
func TestCheckSectionCount(t *testing.T) {
	for _, class := range []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64} {
		for _, count := range []uint64{0xff00, maxSections, maxSections + 1, 1 << 40} {
			b := make([]byte, 64+64)
			copy(b, elf.ELFMAG)
			b[elf.EI_CLASS], b[elf.EI_DATA] = byte(class), byte(elf.ELFDATA2LSB)
			if class == elf.ELFCLASS32 {
				binary.LittleEndian.PutUint32(b[0x20:], 64) // e_shoff; e_shnum 0
				binary.LittleEndian.PutUint32(b[64+20:], uint32(min(count, 1<<32-1)))
			} else {
				binary.LittleEndian.PutUint64(b[0x28:], 64)
				binary.LittleEndian.PutUint64(b[64+32:], count)
			}
			err := checkSectionCount(bytes.NewReader(b))
			if want := count > maxSections; (err != nil) != want {
				t.Errorf("%v, %d headers: error %v, want one: %v", class, count, err, want)
			}
		}
	}
}
