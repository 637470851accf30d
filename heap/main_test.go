package heap

import (
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
