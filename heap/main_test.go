package heap

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// The tests build testdata/dumpprog once, run it to write real heap dumps
// into a temporary directory, and check the graph against what the program
// printed about itself.

var testDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ctxleak-heap-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	// Build the test programs while the first tests run.
	go buildOnce.Do(buildDumpProg)
	go holdersOnce.Do(buildHolders)
	code := m.Run()
	// Wait for builds no test waited for before removing their directory.
	buildOnce.Do(buildDumpProg)
	holdersOnce.Do(buildHolders)
	closeBinaries()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildExe  string
	buildErr  error
)

// dumpProg returns the path of the built test program.
func dumpProg(t testing.TB) string {
	t.Helper()
	buildOnce.Do(buildDumpProg)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildExe
}

// buildDumpProg builds testdata/dumpprog into testDir.
func buildDumpProg() {
	exe := filepath.Join(testDir, "dumpprog")
	// -gcflags=-N would change the stack maps under test; build as users do.
	cmd := exec.Command("go", "build", "-o", exe, "./testdata/dumpprog")
	out, err := cmd.CombinedOutput()
	if err != nil {
		buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		return
	}
	buildExe = exe
}

var (
	binariesMu sync.Mutex
	binaries   = map[string]*binsym.Binary{} // by path, closed by TestMain
)

// openShared returns the executable at path, opened once per test binary
// and shared by the tests, which only read it: the symbols and types it
// derives lazily are read once, not once per test.
func openShared(t testing.TB, path string) *binsym.Binary {
	t.Helper()
	binariesMu.Lock()
	defer binariesMu.Unlock()
	if b, ok := binaries[path]; ok {
		return b
	}
	b, err := binsym.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	binaries[path] = b
	return b
}

// closeBinaries closes the executables openShared opened.
func closeBinaries() {
	for _, b := range binaries {
		b.Close()
	}
}

// testDump is a dump written by dumpprog and what the program printed.
type testDump struct {
	path string
	exe  string
	vals map[string]uint64
}

var (
	dumpsMu sync.Mutex
	dumps   = map[string]*testDump{}
)

// progDump runs dumpprog with args once per test binary and returns its dump.
func progDump(t testing.TB, args ...string) *testDump {
	t.Helper()
	exe := dumpProg(t)
	key := strings.Join(args, " ")
	dumpsMu.Lock()
	defer dumpsMu.Unlock()
	if d, ok := dumps[key]; ok {
		return d
	}
	path := filepath.Join(testDir, fmt.Sprintf("dump%d.bin", len(dumps)))
	cmd := exec.Command(exe, append(args, path)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dumpprog %s: %v", key, err)
	}
	d := &testDump{path: path, exe: exe, vals: map[string]uint64{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			t.Fatalf("dumpprog printed %q", sc.Text())
		}
		d.vals[name] = n
	}
	dumps[key] = d
	return d
}

func (d *testDump) val(t testing.TB, name string) uint64 {
	t.Helper()
	v, ok := d.vals[name]
	if !ok {
		t.Fatalf("dumpprog did not print %s", name)
	}
	return v
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

func (d *testDump) bytes(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
