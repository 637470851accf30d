package heap

import (
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// TestMain runs the tests, which run internal/dumptest's dumpprog to write
// real heap dumps and check the graph against what the program printed
// about itself. The shared tops of every dump are classified in shares on
// both cores, as big dumps' are.
func TestMain(m *testing.M) {
	classifyParallelMin = 0
	dumptest.Main(m)
}

// dumpProg returns the path of the built test program.
func dumpProg(t testing.TB) string { return dumptest.Prog(t) }

// testDump is a dump written by dumpprog and what the program printed.
type testDump struct {
	path string
	exe  string
	d    *dumptest.Dump
}

// analyze analyses the dump with its executable (opened once per test
// binary) and closes the analysis when the test ends.
func (d *testDump) analyze(t testing.TB) *Analysis {
	t.Helper()
	a, err := Analyze(d.path, openShared(t, d.exe))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
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

var (
	binariesMu sync.Mutex
	binaries   = map[string]*binsym.Binary{} // by path
)

// openShared returns the executable at path, opened once per test binary
// and shared by the tests, which only read it: the symbols and types it
// derives lazily are read once, not once per test. It stays open until the
// test binary exits.
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
