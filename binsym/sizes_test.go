package binsym_test

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// patchedCopy copies the test program, lets patch change its bytes, and
// returns the copy's path.
func patchedCopy(t *testing.T, patch func(f *elf.File, data []byte)) string {
	t.Helper()
	data, err := os.ReadFile(progs.exe)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(progs.exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patch(f, data)
	path := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(path, data, 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// A symbol whose size runs past its section is left out, and Missing says
// so.
func TestCorruptSymbolSize(t *testing.T) {
	var name string
	var addr uint64
	path := patchedCopy(t, func(f *elf.File, data []byte) {
		syms, err := f.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		symtab := f.Section(".symtab")
		for i, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_OBJECT && s.Size > 0 && strings.HasPrefix(s.Name, "main.") {
				name, addr = s.Name, s.Value
				// Elf64_Sym: name, info, other, shndx, value, size; entry 0 is
				// not in syms.
				binary.LittleEndian.PutUint64(data[symtab.Offset+24*uint64(i+1)+16:], 1<<40)
				return
			}
		}
		t.Fatal("no sized main.* data symbol in the test program")
	})
	b := open(t, path)
	if s, ok := b.Symbol(addr); ok && s.Name == name {
		t.Errorf("Symbol(%#x) = %s of %d bytes, a corrupt symbol", addr, s.Name, s.Size)
	}
	missing := strings.Join(b.Missing(), "\n")
	if !strings.Contains(missing, "1 corrupt ELF symbols") || !strings.Contains(missing, name) {
		t.Errorf("Missing() = %q, want it to name the corrupt symbol %s", missing, name)
	}
}

// A section that runs past the end of the file is refused by Open, which
// names it.
func TestSectionPastEOF(t *testing.T) {
	path := patchedCopy(t, func(f *elf.File, data []byte) {
		// Elf64_Shdr: name, type, flags, addr, offset, size, ...
		shoff := binary.LittleEndian.Uint64(data[0x28:])
		for i, s := range f.Sections {
			if s.Name == ".symtab" {
				binary.LittleEndian.PutUint64(data[shoff+64*uint64(i)+32:], uint64(len(data)))
				return
			}
		}
		t.Fatal("no .symtab")
	})
	b, err := binsym.Open(path)
	if err == nil {
		b.Close()
		t.Fatal("Open accepted a section past the end of the file")
	}
	if !strings.Contains(err.Error(), ".symtab") || !strings.Contains(err.Error(), "past the end of the file") {
		t.Errorf("error %q", err)
	}
}

// A FIFO is refused before it is opened: opening it would wait for a
// writer for ever.
func TestOpenFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	b, err := binsym.Open(path)
	if err == nil {
		b.Close()
		t.Fatal("Open accepted a FIFO")
	}
	if !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), path) {
		t.Errorf("error %q", err)
	}
}
