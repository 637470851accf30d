package heapdump

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// The tests run internal/dumptest's dumpprog to write real heap dumps, and
// check the graph against what the program printed about itself.

func TestMain(m *testing.M) { dumptest.Main(m) }

// dumpProg returns the path of the built test program.
func dumpProg(t testing.TB) string { return dumptest.Prog(t) }

// testDump is a dump written by dumpprog and what the program printed.
type testDump struct {
	path string
	exe  string
	d    *dumptest.Dump
}

// progDump runs dumpprog with args once per test binary and returns its dump.
func progDump(t testing.TB, args ...string) *testDump {
	t.Helper()
	d := dumptest.Run(t, args...)
	return &testDump{path: d.Path, exe: d.Exe, d: d}
}

func (d *testDump) val(t testing.TB, name string) uint64 {
	t.Helper()
	return d.d.Val(t, name)
}

func (d *testDump) bytes(t testing.TB) []byte {
	t.Helper()
	return d.d.Bytes(t)
}

func (d *testDump) load(t testing.TB, opts Options) *Graph {
	t.Helper()
	g, err := Load(d.path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// argsSizes reads funcInfo.args of every function from the binary's
// pclntab (Go 1.20+ layout, src/runtime/symtab.go), the way the binsym
// package does for the real tool, and returns it as an OutArgs function.
func argsSizes(t testing.TB, exe string) func(uint64) (int64, bool) {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".gopclntab")
	if sec == nil {
		t.Fatal("no .gopclntab")
	}
	tab, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var text uint64
	for _, s := range syms {
		if s.Name == "runtime.text" {
			text = s.Value
		}
	}
	le := binary.LittleEndian
	if le.Uint32(tab) != 0xfffffff1 || tab[7] != 8 {
		t.Fatalf("pclntab magic %#x, ptr size %d: not a Go 1.20+ 64-bit pclntab", le.Uint32(tab), tab[7])
	}
	nfunc := le.Uint64(tab[8:])
	functab := tab[le.Uint64(tab[64:]):] // pclnOffset
	args := make(map[uint64]int64, nfunc)
	for i := uint64(0); i < nfunc; i++ {
		entryOff, funcOff := le.Uint32(functab[8*i:]), le.Uint32(functab[8*i+4:])
		fn := functab[funcOff:]
		if le.Uint32(fn) != entryOff {
			t.Fatalf("pclntab func %d: entry mismatch", i)
		}
		args[text+uint64(entryOff)] = int64(int32(le.Uint32(fn[8:])))
	}
	return func(entry uint64) (int64, bool) {
		a, ok := args[entry]
		if !ok || a < 0 { // abi.ArgsSizeUnknown
			return 0, false
		}
		return a, true
	}
}

// globalSymbols returns a GlobalSymbol function over the binary's ELF
// object symbols.
func globalSymbols(t testing.TB, exe string) func(uint64) (string, uint64, bool) {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	syms = slices.DeleteFunc(syms, func(s elf.Symbol) bool {
		return elf.ST_TYPE(s.Info) != elf.STT_OBJECT || s.Size == 0
	})
	slices.SortFunc(syms, func(a, b elf.Symbol) int { return cmp.Compare(a.Value, b.Value) })
	return func(addr uint64) (string, uint64, bool) {
		i, found := slices.BinarySearchFunc(syms, addr, func(s elf.Symbol, a uint64) int { return cmp.Compare(s.Value, a) })
		if !found {
			i--
		}
		if i < 0 || addr >= syms[i].Value+syms[i].Size {
			return "", 0, false
		}
		return syms[i].Name, syms[i].Value, true
	}
}
