package retain

import (
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

func TestDecodeGCProg(t *testing.T) {
	tests := []struct {
		name   string
		prog   []byte
		nwords uint64
		want   []uint64 // pointer word offsets, in bytes
		err    string
	}{
		{"empty", []byte{0}, 4, nil, ""},
		{"literal", []byte{5, 0b10110, 0}, 8, []uint64{8, 16, 32}, ""},
		{"literal over a byte", []byte{10, 0x01, 0b10, 0}, 16, []uint64{0, 72}, ""},
		{"repeat", []byte{2, 0b01, 0x82, 3, 0}, 8, []uint64{0, 16, 32, 48}, ""},
		{"repeat, varint length", []byte{2, 0b10, 0x80, 2, 2, 0}, 6, []uint64{8, 24, 40}, ""},
		{"one bit repeated", []byte{1, 1, 0x81, 5, 0}, 8, []uint64{0, 8, 16, 24, 32, 40}, ""},
		{"truncated", []byte{5}, 8, nil, "truncated"},
		{"no stop", []byte{1, 1}, 8, nil, "truncated"},
		{"literal too long", []byte{9, 0xff, 0xff, 0}, 8, nil, "longer than its segment"},
		{"repeat too long", []byte{1, 1, 0x81, 8, 0}, 8, nil, "repeats more"},
		{"repeat before any bits", []byte{0x81, 1, 0}, 8, nil, "repeats more"},
		{"huge count", []byte{1, 1, 0x81, 0xff, 0xff, 0xff, 0xff, 0x0f, 0}, 8, nil, "repeats more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeGCProg(tt.prog, tt.nwords)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("decodeGCProg = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestRelinkArgs(t *testing.T) {
	bi := &debug.BuildInfo{
		Path: "example.com/m/pkg.test",
		Settings: []debug.BuildSetting{
			{Key: "-buildmode", Value: "exe"},
			{Key: "-compiler", Value: "gc"},
			{Key: "-race", Value: "true"},
			{Key: "-tags", Value: "a,b"},
			{Key: "-gcflags", Value: "all=-N -l"},
			{Key: "DefaultGODEBUG", Value: "x=1"},
			{Key: "CGO_ENABLED", Value: "1"},
			{Key: "CGO_CFLAGS", Value: ""},
			{Key: "GOARCH", Value: "amd64"},
			{Key: "GOAMD64", Value: "v3"},
			{Key: "GOEXPERIMENT", Value: "goroutineleakprofile"},
			{Key: "vcs.revision", Value: "abc"},
		},
	}
	args, env := relinkArgs(bi, "/tmp/x.test")
	wantArgs := []string{"test", "-c", "-o", "/tmp/x.test", "-buildmode=exe", "-compiler=gc", "-race=true",
		"-tags=a,b", "-gcflags=all=-N -l", "example.com/m/pkg"}
	wantEnv := []string{"CGO_ENABLED=1", "CGO_CFLAGS=", "GOARCH=amd64", "GOAMD64=v3", "GOEXPERIMENT=goroutineleakprofile"}
	if !slices.Equal(args, wantArgs) {
		t.Errorf("args = %q\nwant   %q", args, wantArgs)
	}
	if !slices.Equal(env, wantEnv) {
		t.Errorf("env = %q\nwant  %q", env, wantEnv)
	}
}

func TestCheckSegments(t *testing.T) {
	rb := &relinkedBinary{masks: map[heapdump.SegmentKind]ptrMask{
		heapdump.SegmentData: {addr: 0x1000, size: 64, ptrs: []uint64{0, 16}},
		heapdump.SegmentBSS:  {addr: 0x2000, size: 32, ptrs: []uint64{8}},
	}}
	seg := func(kind heapdump.SegmentKind, addr uint64, size int, ptrs ...uint64) heapdump.Segment {
		return heapdump.Segment{Kind: kind, Addr: addr, Size: uint64(size), PtrOffsets: ptrs}
	}
	good := []heapdump.Segment{seg(heapdump.SegmentData, 0x1000, 64, 0, 16), seg(heapdump.SegmentBSS, 0x2000, 32, 8)}
	if err := rb.check(good, 0); err != nil {
		t.Errorf("matching segments: %v", err)
	}
	moved := []heapdump.Segment{seg(heapdump.SegmentData, 0x5000, 64, 0, 16), seg(heapdump.SegmentBSS, 0x6000, 32, 8)}
	if err := rb.check(moved, 0x4000); err != nil {
		t.Errorf("segments of a PIE at bias 0x4000: %v", err)
	}
	for name, segs := range map[string][]heapdump.Segment{
		"none":          nil,
		"elsewhere":     {seg(heapdump.SegmentData, 0x1008, 64, 0, 16)},
		"longer":        {seg(heapdump.SegmentData, 0x1000, 72, 0, 16)},
		"other pointer": {seg(heapdump.SegmentData, 0x1000, 64, 0, 24)},
		"fewer":         {seg(heapdump.SegmentBSS, 0x2000, 32)},
	} {
		if err := rb.check(segs, 0); err == nil {
			t.Errorf("%s: check accepted segments that differ", name)
		}
	}
}

// globalHeld is a global that holds a payload for the tests below.
var globalHeld struct {
	name string
	body []byte
}

// strippedBinary skips the test unless the test binary has no symbol table
// (go test without -o or -c).
func strippedBinary(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	bin, err := binsym.Open(exe)
	if err != nil {
		t.Skip(err)
	}
	defer bin.Close()
	if bin.HasSymbols() {
		t.Skip("the test binary has symbols (built with -o or -c): nothing to relink")
	}
}

// resetRelink forgets the relinked binary for the test, and puts back what
// was there after it, so that later tests need not relink again.
func resetRelink(t *testing.T) {
	relinked.Lock()
	done, bin, err, took := relinked.done, relinked.bin, relinked.err, relinked.took
	relinked.done, relinked.bin, relinked.err = false, nil, nil
	relinked.Unlock()
	t.Cleanup(func() {
		relinked.Lock()
		relinked.done, relinked.bin, relinked.err, relinked.took = done, bin, err, took
		relinked.Unlock()
	})
}

// failGlobal fails a tracker on a payload held by globalHeld and returns the
// failure.
func failGlobal(t *testing.T) string {
	t.Helper()
	tb := &fakeTB{name: t.Name()}
	tr := New(tb, Timeout(0), DumpDir(t.TempDir()))
	globalHeld.body = make([]byte, 64<<10)
	tr.Track(globalHeld.body, "held by a global")
	if tr.AssertReleased() {
		t.Fatal("AssertReleased passed with the payload in a global")
	}
	globalHeld.body = nil
	return tb.text()
}

// TestGlobalsNamedByRelink names a global of a stripped test binary, and
// says how long the relink took. It reuses the relinked binary of an
// earlier test, if any (the relink runs once per process, as for users).
func TestGlobalsNamedByRelink(t *testing.T) {
	strippedBinary(t)
	msg := failGlobal(t)
	want := "held by global github.com/ctxleak/ctxleak/retain.globalHeld (bss segment)"
	if !strings.Contains(msg, want) || strings.Contains(msg, "note:") {
		t.Errorf("failure lacks %q, or has a note:\n%s", want, msg)
	}
	t.Logf("relink took %v", relinked.took.Round(time.Millisecond))
}

// TestGlobalsWithoutGoCommand checks the failure when the test binary
// cannot be relinked: the global is named by its address, and a note says
// why and what to do.
func TestGlobalsWithoutGoCommand(t *testing.T) {
	strippedBinary(t)
	resetRelink(t)
	old := goCommand
	goCommand = func() (string, error) { return "", errors.New(`exec: "go": executable file not found in $PATH`) }
	t.Cleanup(func() { goCommand = old })
	msg := failGlobal(t)
	for _, want := range []string{
		"held by global 0x",
		"note: globals are named by address: the test binary has no symbol table (go test links it with -s -w) " +
			"and no go command was found to relink it: exec: \"go\": executable file not found in $PATH; " +
			"go test -o FILE keeps the symbols\n",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure lacks %q:\n%s", want, msg)
		}
	}
	runtime.KeepAlive(globalHeld)
}
