//go:build linux

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/internal/dumptest"
	"github.com/ctxleak/ctxleak/internal/procmem"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// Inputs that are named pipes are refused with exit 2 before anything
// opens them: opening a FIFO for reading would block until a writer came.
func TestFIFOInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	dump := filepath.Join(dir, "app.heapdump")
	if err := os.WriteFile(dump, []byte("go1.7 heap dump\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"holders", fifo},
		{"holders", dump, "--binary", fifo},
		{"analyze", fifo},
		{"analyze", dump, "--base", fifo},
		{"cost", "--base", fifo},
	} {
		done := make(chan struct{})
		var code int
		var stderr bytes.Buffer
		go func() {
			defer close(done)
			code = execute(strings.NewReader(""), &bytes.Buffer{}, &stderr, args)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("ctxleak %s: still running after a minute: blocked on the FIFO", strings.Join(args, " "))
		}
		if code != exitUsage || !strings.Contains(stderr.String(), fifo) || !strings.Contains(stderr.String(), "named pipe (FIFO), not a regular file") {
			t.Errorf("ctxleak %s: exit %d, %q; want exit 2 naming the FIFO", strings.Join(args, " "), code, stderr.String())
		}
	}
}

// hostileChildEnv holds the arguments of ctxleak for TestHostileChild,
// separated by newlines.
const hostileChildEnv = "CTXLEAK_TEST_HOSTILE_ARGS"

// hostilePeakEnv names the file where TestHostileChild writes its peak
// RSS in bytes (VmHWM) before it exits.
const hostilePeakEnv = "CTXLEAK_TEST_HOSTILE_PEAK"

// TestHostileChild is ctxleak in a child process of TestHostileDumpMemory.
// It reports its own peak RSS: the kernel's figure for the child at exit
// (rusage) counts the parent's too, and the parent is this whole test
// binary, hundreds of MiB when the package's other tests run beside it.
func TestHostileChild(t *testing.T) {
	args := os.Getenv(hostileChildEnv)
	if args == "" {
		t.Skip("runs as a child of TestHostileDumpMemory")
	}
	code := execute(os.Stdin, os.Stdout, os.Stderr, strings.Split(args, "\n"))
	if path := os.Getenv(hostilePeakEnv); path != "" {
		peak, err := procmem.Status("VmHWM")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		if err := os.WriteFile(path, []byte(strconv.FormatInt(peak, 10)), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
	os.Exit(code)
}

// A 57-byte dump made 32 GiB long by a hole, whose memory profile bucket
// asks for a stack of 10G frames (400 GB of positions): ctxleak holders,
// in a process of its own, refuses it with exit 2 naming the offset,
// with a peak RSS (its VmHWM, race detector included) under 256 MiB.
func TestHostileDumpMemory(t *testing.T) {
	e := dumptest.NewEncoder().U(6, 0, 8, 1<<40, 1<<40+1<<20).S([]byte("amd64")).S([]byte("go1.26.0")).U(2)
	e.U(16, 0x1000, 16) // memprof bucket: address, size
	off := len(e.B)
	e.U(10 << 30) // stack depth
	path := filepath.Join(t.TempDir(), "depth.heapdump")
	if err := os.WriteFile(path, e.B, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 32<<30); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	peakFile := filepath.Join(t.TempDir(), "peak")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileChild$")
	cmd.Env = append(os.Environ(), hostileChildEnv+"=holders\n"+path, hostilePeakEnv+"="+peakFile, "GORACE="+noExitSleep())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	want := "offset " + strconv.Itoa(off) + ": memprof bucket record: stack depth 10737418240 is more than the runtime's 1024"
	if code != exitUsage || !strings.Contains(stderr.String(), want) {
		t.Fatalf("exit %d (%v), stderr %q; want exit 2 and %q", code, err, stderr.String(), want)
	}
	b, err := os.ReadFile(peakFile)
	if err != nil {
		t.Fatalf("the child's peak RSS: %v", err)
	}
	peak, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || peak <= 0 {
		t.Fatalf("the child's peak RSS: %q (%v)", b, err)
	}
	t.Logf("child's peak RSS %.1f MiB", float64(peak)/(1<<20))
	if peak > 256<<20 {
		t.Errorf("peak RSS %d bytes, want at most 256 MiB", peak)
	}
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A dump on standard input is spooled to a temporary file: endless input
// that is not a dump is refused from its first bytes, and an endless dump
// at --max-dump-size, with the spool file removed either way.
func TestStdinDumpBounded(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, tt := range []struct {
		name  string
		stdin io.Reader
		args  []string
		want  string
	}{
		{"zeros", zeros{}, nil, `-: not a Go heap dump: it starts with "\x00\x00`},
		{"empty", strings.NewReader(""), nil, "-: empty, not a Go heap dump"},
		{"gzip", strings.NewReader("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x00\x00\x00\x00\x00\x00\x00"), nil, "(gzip data: decompress it first"},
		{"endless dump", io.MultiReader(strings.NewReader("go1.7 heap dump\n"), zeros{}), []string{"--max-dump-size", "1MiB"},
			"-: the dump is over --max-dump-size 1MiB"},
	} {
		done := make(chan struct{})
		var code int
		var stderr bytes.Buffer
		go func() {
			defer close(done)
			code = execute(tt.stdin, &bytes.Buffer{}, &stderr, append([]string{"holders", "-"}, tt.args...))
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%s: still spooling after a minute", tt.name)
		}
		if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%s: exit %d, %q; want exit 2 and %q", tt.name, code, stderr.String(), tt.want)
		}
		if names, _ := filepath.Glob(filepath.Join(tmp, "*")); len(names) > 0 {
			t.Errorf("%s: left behind %q", tt.name, names)
		}
	}
}

// -o naming a named pipe that no process reads is refused at once: the
// open would wait for a reader for ever. With a reader, the report goes
// through.
func TestOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	e := dumptest.NewEncoder().U(6, 0, 8, 1<<40, 1<<40+1<<20).S([]byte("amd64")).S([]byte("go1.26.0")).U(2, 0)
	dump := filepath.Join(dir, "empty.heapdump")
	if err := os.WriteFile(dump, e.B, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func() (int, string) {
		done := make(chan struct{})
		var code int
		var stderr bytes.Buffer
		go func() {
			defer close(done)
			code = execute(strings.NewReader(""), &bytes.Buffer{}, &stderr, []string{"holders", dump, "-o", fifo, "--force"})
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("still opening the FIFO after a minute")
		}
		return code, stderr.String()
	}
	if code, stderr := run(); code != exitUsage || !strings.Contains(stderr, "-o "+fifo+": a named pipe (FIFO) that no process is reading") {
		t.Errorf("no reader: exit %d, %q", code, stderr)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo) // waits for the writer
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	// The reader's open must come first: retry until it has.
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		code, stderr := run()
		if code == exitClean {
			break
		}
		if !strings.Contains(stderr, "no process is reading") {
			t.Fatalf("with a reader: exit %d, %q", code, stderr)
		}
		time.Sleep(wait)
	}
	if b := <-got; !bytes.Contains(b, []byte("heap dump "+dump)) {
		t.Errorf("the reader got %q", b)
	}
}

// cost --base refuses a file larger than any cost report before decoding
// it (a 1 GiB sparse file here), and JSON nested past the decoder's depth.
func TestCostBaseBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"schema": "`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<30); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	deep := filepath.Join(dir, "deep.json")
	if err := os.WriteFile(deep, bytes.Repeat([]byte("["), 100_000), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		big:  "--base " + big + ": 1.0 GiB, over the 16.0 MiB a cost report can be",
		deep: "--base " + deep + ": not a cost report",
	} {
		code, _, stderr := ctxleak(t, "cost", "--base", path)
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("cost --base %s: exit %d, %q; want %q", path, code, stderr, want)
		}
	}
}

// Text from a dump reaches no output raw: its Go version and GOARCH
// strings, function names and root descriptions hold escape sequences, a
// forged GitHub workflow command on a line of its own, a bidi override and
// invalid UTF-8. An object held by a frame and another root lists both in
// held_by.
func TestHostileDumpText(t *testing.T) {
	evil := []byte("main.\x1b[31mred\r\n::error::forged\u202eevil\xff")
	const arena = 1 << 40
	e := dumptest.NewEncoder().U(6, 0, 8, arena, arena+1<<30).S(evil).S(evil).U(2)
	e.U(1, arena).S(make([]byte, 1<<20)).Fields(nil)                                               // an object of 1 MiB
	e.U(4, 0xc000001000, 0xc000100000, 1, 0x401000, 4, 0, 0, 0).S(evil).U(0, 0, 0, 0)              // goroutine 1
	slot := []byte{0, 0, 0, 0, 0, 1, 0, 0}                                                         // the object's address
	e.U(5, 0xc000100000, 0, 0).S(slot).U(0x401000, 0x401010, 0x401010).S(evil).Fields([]uint64{0}) // its frame
	e.U(2).S(evil).U(arena)                                                                        // another root
	e.U(0)
	dump := filepath.Join(t.TempDir(), "evil.heapdump")
	if err := os.WriteFile(dump, e.B, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		code, stdout, stderr := ctxleak(t, "holders", dump, "--min-size", "1", "--format", format)
		if code != exitFindings {
			t.Fatalf("--format %s: exit %d, %q", format, code, stderr)
		}
		if !strings.Contains(stdout, "forged") {
			t.Errorf("--format %s: the names are missing:\n%s", format, stdout)
		}
		for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if !textsafe.IsSafe(strings.NewReplacer("\n", "", "\t", "").Replace(out)) {
				t.Errorf("--format %s: %s holds unescaped text: %q", format, name, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "::") {
					t.Errorf("--format %s: %s has a line of the dump's text: %q", format, name, line)
				}
			}
		}
	}
}

// holders given a pprof profile says so, but the hint costs little: a
// 30 KB gzip file holding a location of 1M lines (6 MB, 200 MB to decode)
// gets no hint rather than a decoding.
func TestDumpHintBounded(t *testing.T) {
	var loc []byte
	loc = append(loc, 0x08, 1) // id 1
	for range 1_000_000 {
		loc = append(loc, 0x22, 4, 0x08, 1, 0x10, 1) // line: function 1, line 1
	}
	field := func(b []byte, num int, body []byte) []byte {
		b = append(b, byte(num<<3|2))
		b = binary.AppendUvarint(b, uint64(len(body)))
		return append(b, body...)
	}
	var p []byte
	p = field(p, 1, []byte{0x08, 1, 0x10, 2})
	for _, s := range []string{"", "inuse_space", "bytes"} {
		p = field(p, 6, []byte(s))
	}
	p = field(p, 5, []byte{0x08, 1, 0x10, 1})
	p = field(p, 4, loc)
	p = field(p, 2, []byte{0x0a, 1, 1, 0x12, 1, 1})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(p)
	zw.Close()
	path := filepath.Join(t.TempDir(), "lines.pb.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var code int
	var stderr bytes.Buffer
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code = execute(strings.NewReader(""), &bytes.Buffer{}, &stderr, []string{"holders", path})
	runtime.ReadMemStats(&after)
	if code != exitUsage || !strings.Contains(stderr.String(), "not a Go heap dump") {
		t.Errorf("exit %d, %q", code, stderr.String())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("holders on a %d KB profile allocated %d MiB", gz.Len()>>10, alloc>>20)
	}
}
