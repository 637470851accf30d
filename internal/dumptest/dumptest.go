// Package dumptest runs testdata/dumpprog, a program that writes real heap
// dumps with runtime/debug.WriteHeapDump and prints what it knows about
// itself, for the tests of heapdump and heap; and splits and re-encodes
// dumps (Walk, Encoder) to cut, corrupt and minimize them.
package dumptest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/internal/testbuild"
	"github.com/ctxleak/ctxleak/internal/testexit"
)

var (
	dirOnce sync.Once
	dir     string
	dirErr  error

	buildOnce sync.Once
	buildExe  string
	buildErr  error

	dumpsMu sync.Mutex
	dumps   = map[string]*Dump{}
)

// Main runs the tests of m and removes the programs and dumps they made.
// Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	testexit.Exit(code)
}

// TempDir returns the directory, removed by Main, where the programs and dumps go.
func TempDir(t testing.TB) string {
	t.Helper()
	dirOnce.Do(func() { dir, dirErr = os.MkdirTemp("", "ctxleak-dumptest-") })
	if dirErr != nil {
		t.Fatal(dirErr)
	}
	return dir
}

// Prog returns the path of dumpprog, built once per test binary.
func Prog(t testing.TB) string {
	t.Helper()
	d := TempDir(t)
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		src := filepath.Join(filepath.Dir(file), "testdata", "dumpprog")
		exe := filepath.Join(d, "dumpprog")
		// -gcflags=-N would change the stack maps under test; build as users do.
		out, err := testbuild.Build(exe, nil, src)
		if err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
			return
		}
		buildExe = exe
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildExe
}

// Dump is a dump written by dumpprog and what the program printed.
type Dump struct {
	Path string // the dump file
	Exe  string // the dumpprog executable that wrote it
	vals map[string]uint64
}

// Run runs dumpprog with args once per test binary and returns its dump.
func Run(t testing.TB, args ...string) *Dump {
	t.Helper()
	exe := Prog(t)
	key := strings.Join(args, " ")
	dumpsMu.Lock()
	defer dumpsMu.Unlock()
	if d, ok := dumps[key]; ok {
		return d
	}
	path := filepath.Join(TempDir(t), fmt.Sprintf("dump%d.bin", len(dumps)))
	cmd := exec.Command(exe, append(args, path)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dumpprog %s: %v", key, err)
	}
	d := &Dump{Path: path, Exe: exe, vals: map[string]uint64{}}
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

// Val returns the value dumpprog printed under name.
func (d *Dump) Val(t testing.TB, name string) uint64 {
	t.Helper()
	v, ok := d.vals[name]
	if !ok {
		t.Fatalf("dumpprog did not print %s", name)
	}
	return v
}

// Bytes returns the contents of the dump file.
func (d *Dump) Bytes(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
