package heap

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/dumptest"
	"github.com/ctxleak/ctxleak/internal/testbuild"
)

// matchBinary is the whole check the reader makes in two steps (see
// matchSegments): the first difference as a *binsym.MismatchError.
func matchBinary(path string, d *heapdump.Dump, bin *binsym.Binary) error {
	if err := matchSegments(path, d, bin); err != nil {
		return err
	}
	return matchFrames(path, d, bin)
}

// The tests of matchBinary build testdata/match three ways (plainly,
// without optimizations, and with two more functions), run the plain build
// to write a dump, and analyse it with each build and with other programs:
// only the plain build may be accepted.

var (
	matchOnce sync.Once
	matchExe  map[string]string // by build: "", "noopt", "extra"
	matchDump string
	matchErr  error
)

// matchBuilds returns the builds of testdata/match and the plain build's
// dump, made once per test binary.
func matchBuilds(t testing.TB) (map[string]string, string) {
	t.Helper()
	dir := dumptest.TempDir(t)
	matchOnce.Do(func() { matchExe, matchDump, matchErr = buildMatch(dir) })
	if matchErr != nil {
		t.Fatal(matchErr)
	}
	return matchExe, matchDump
}

func buildMatch(dir string) (map[string]string, string, error) {
	src, err := os.ReadFile("testdata/match/main.go")
	if err != nil {
		return nil, "", err
	}
	// The variant: two more functions, called where the marker is.
	extra := strings.Replace(string(src), "// EXTRA: the variant's calls go here.", "extra1()\n\textra2()", 1) +
		"\n//go:noinline\nfunc extra1() { last = nil }\n\n//go:noinline\nfunc extra2() { cache = map[string][]byte{} }\n"
	if extra == string(src)+"\n" {
		return nil, "", errors.New("testdata/match/main.go has no EXTRA marker")
	}
	extraDir := filepath.Join(dir, "match-extra-src")
	if err := os.MkdirAll(extraDir, 0o700); err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(filepath.Join(extraDir, "main.go"), []byte(extra), 0o600); err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(filepath.Join(extraDir, "go.mod"), []byte("module extra\n\ngo 1.22\n"), 0o600); err != nil {
		return nil, "", err
	}
	exes := map[string]string{}
	builds := []struct {
		name, dir string
		args      []string
	}{
		{"", ".", []string{"./testdata/match"}},
		{"noopt", ".", []string{"-gcflags=all=-N", "./testdata/match"}},
		{"extra", extraDir, []string{"."}},
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, b := range builds {
		exe := filepath.Join(dir, "match-"+b.name)
		exes[b.name] = exe
		wg.Go(func() {
			if out, err := testbuild.BuildIn(b.dir, exe, nil, b.args...); err != nil {
				errs[i] = fmt.Errorf("%v\n%s", err, out)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	dump := filepath.Join(dir, "match.dump")
	if out, err := exec.Command(exes[""], dump).CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("match: %v\n%s", err, out)
	}
	return exes, dump, nil
}

// The executable that wrote the dump is accepted.
func TestMatchRightBinary(t *testing.T) {
	exes, dump := matchBuilds(t)
	a, err := Analyze(dump, openShared(t, exes[""]))
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
}

// Any other build is refused with a *binsym.MismatchError naming the first
// difference.
func TestMatchWrongBinary(t *testing.T) {
	exes, dump := matchBuilds(t)
	for _, tt := range []struct{ name, exe string }{
		{"built with -gcflags=all=-N", exes["noopt"]},
		{"two more functions", exes["extra"]},
		{"another program", holdersProg(t, "")},
		{"another program, stripped", holdersProg(t, "stripped")},
		{"dumptest's program", dumpProg(t)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(dump, openShared(t, tt.exe))
			if err == nil {
				a.Close()
				t.Fatal("accepted an executable that did not write the dump")
			}
			var me *binsym.MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("error %q is not a *binsym.MismatchError", err)
			}
			if me.What == "" || me.Dump == "" || me.Exe == "" || !strings.Contains(err.Error(), "not the executable that wrote the dump") {
				t.Errorf("error %q, %+v", err, me)
			}
			t.Log(err)
		})
	}
}

// Dumps of the other programs are refused by this one's executable.
func TestMatchWrongDump(t *testing.T) {
	exes, _ := matchBuilds(t)
	r := runPattern(t, "goroutine")
	a, err := Analyze(r.dump, openShared(t, exes[""]))
	if err == nil {
		a.Close()
		t.Fatal("accepted an executable that did not write the dump")
	}
	var me *binsym.MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("error %q is not a *binsym.MismatchError", err)
	}
}

// Each check refuses on its own: a frame's function name or entry, a
// segment's address, size or pointer mask, the Go version; and accepts a
// GOEXPERIMENT suffix on the executable's version only.
func TestMatchEachCheck(t *testing.T) {
	exes, dump := matchBuilds(t)
	g, err := heapdump.Load(dump, heapdump.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	d := g.Dump()
	bin := openShared(t, exes[""])
	if err := matchBinary(dump, d, bin); err != nil {
		t.Fatalf("the right executable: %v", err)
	}
	var frame heapdump.Frame
	fn := ""
	for i, f := range d.Frames {
		if d.FrameFunc(i) == "main.wait" {
			frame, fn = f, "main.wait"
		}
	}
	if fn == "" {
		t.Fatal("no frame of main.wait in the dump")
	}
	var data heapdump.Segment
	for _, s := range d.Segments {
		if s.Kind == heapdump.SegmentData {
			data = s
		}
	}
	if len(data.PtrOffsets) == 0 {
		t.Fatal("no pointer slot in the data segment")
	}
	mask := func(drop int) []uint64 {
		return append(append([]uint64(nil), data.PtrOffsets[:drop]...), data.PtrOffsets[drop+1:]...)
	}
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"another name", bin.NewFrameMatcher().Match("main.hold", frame.Entry, frame.PC)},
		{"an entry inside the function", bin.NewFrameMatcher().Match(fn, frame.Entry+1, frame.PC)},
		{"a PC outside the function", bin.NewFrameMatcher().Match(fn, frame.Entry, frame.Entry+1<<20)},
		{"an entry after the text", bin.NewFrameMatcher().Match(fn, 1<<40, 0)},
		{"data segment elsewhere", bin.MatchSegment(binsym.DataSegment, data.Addr+8, data.Size, data.PtrOffsets)},
		{"data segment shorter", bin.MatchSegment(binsym.DataSegment, data.Addr, data.Size-8, data.PtrOffsets)},
		{"a pointer slot less", bin.MatchSegment(binsym.DataSegment, data.Addr, data.Size, mask(len(data.PtrOffsets)/2))},
		{"a pointer slot more", bin.MatchSegment(binsym.DataSegment, data.Addr, data.Size, append(data.PtrOffsets[:len(data.PtrOffsets):len(data.PtrOffsets)], data.Size-1))},
		{"another Go version", bin.MatchGoVersion("go1.20.1")},
	} {
		var me *binsym.MismatchError
		if !errors.As(tt.err, &me) {
			t.Errorf("%s: error %v, want a *binsym.MismatchError", tt.name, tt.err)
		}
	}
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"the frame", bin.NewFrameMatcher().Match(fn, frame.Entry, frame.PC)},
		{"an unnamed frame", bin.NewFrameMatcher().Match("unknown function", 1, 2)},
		{"the data segment", bin.MatchSegment(binsym.DataSegment, data.Addr, data.Size, data.PtrOffsets)},
		{"the Go version with an experiment", bin.MatchGoVersion(bin.GoVersion() + " X:greenteagc")},
		{"the Go version with a Go 1.26 experiment", bin.MatchGoVersion(bin.GoVersion() + "-X:nogreenteagc")},
	} {
		if tt.err != nil {
			t.Errorf("%s: %v", tt.name, tt.err)
		}
	}
}

// BenchmarkMatchBinary checks a dump of 1M stack frames (the frames of
// testdata/match's dump, repeated, each with an entry of its own in one
// case) against the executable: linear in the frames.
func BenchmarkMatchBinary(b *testing.B) {
	exes, dump := matchBuilds(b)
	g, err := heapdump.Load(dump, heapdump.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	d := *g.Dump()
	const n = 1_000_000
	frames := make([]heapdump.Frame, 0, n)
	for len(frames) < n {
		frames = append(frames, d.Frames...)
	}
	d.Frames = frames[:n]
	bin := openShared(b, exes[""])
	for b.Loop() {
		if err := matchBinary(dump, &d, bin); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/frame")
}
