package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/internal/dumptest"
	"github.com/ctxleak/ctxleak/internal/leaktest"
	"github.com/ctxleak/ctxleak/internal/testbuild"
)

// leaksFixture is testdata/leakholders run once per test binary: its
// directory (the dump and the three forms of the goroutineleak profile)
// and executable.
var leaksFixture struct {
	once     sync.Once
	dir, exe string
	err      error
	skip     string
}

// leaksDump runs testdata/leakholders, built with a Go that has the
// goroutineleak profile (this one, or else go1.27.3 through GOTOOLCHAIN),
// and returns the directory it wrote into and its executable; it skips the
// test when no such Go is at hand.
func leaksDump(t *testing.T) (dir, exe string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a child program that dumps 30 MB")
	}
	f := &leaksFixture
	f.once.Do(func() {
		env, err := leaktest.BuildEnv()
		if err != nil {
			f.skip = err.Error()
			return
		}
		root := dumptest.TempDir(t)
		f.exe, f.dir = filepath.Join(root, "leakholders"), filepath.Join(root, "leakholders.out")
		if out, err := testbuild.Build(f.exe, env, "./testdata/leakholders"); err != nil {
			f.err = &buildError{err, out}
			return
		}
		if err := os.Mkdir(f.dir, 0o700); err != nil {
			f.err = err
			return
		}
		out, err := exec.Command(f.exe, f.dir).CombinedOutput()
		if err != nil || string(out) != "1500 leaked\n" {
			f.err = &buildError{err, out}
		}
	})
	if f.skip != "" {
		t.Skip(f.skip)
	}
	if f.err != nil {
		t.Fatal(f.err)
	}
	return f.dir, f.exe
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "leakholders: " + errString(e.err) + "\n" + string(e.out) }

func errString(err error) string {
	if err == nil {
		return "unexpected output"
	}
	return err.Error()
}

// The groups of the 1,500 goroutines blocked for ever in ch <- v, and of
// the 200 blocked on a channel a global keeps, as holders --leaks shows
// them, whatever the form of the profile.
var (
	leakedGroup = regexp.MustCompile(`(?m)^#1 1,500 goroutines in main\.main\.gowrap1 \(created at main\.main leakholders/main\.go:\d+\) hold 23\.4 MiB: .*\n` +
		`    leaked for ever: all 1,500 goroutines blocked in chan send on a channel nothing runnable reaches \(proven by the goroutineleak profile\), retaining 23\.4 MiB\n`)
	heldGroup = regexp.MustCompile(`(?m)^#2 200 goroutines in main\.main\.gowrap2 \(created at main\.main leakholders/main\.go:\d+\) hold 3\.1 MiB: .*\n` +
		`    not proven leaked: `)
)

// TestHoldersLeaks joins a heap dump with the goroutineleak profile the
// same process took after it (Go 1.27): in each of the profile's forms,
// from a file, standard input and a URL, the 1,500 leaked goroutines'
// group is marked and first, the 200 held ones' not.
func TestHoldersLeaks(t *testing.T) {
	dir, exe := leaksDump(t)
	dump := filepath.Join(dir, "leak.heapdump")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/goroutineleak" {
			http.NotFound(w, r)
			return
		}
		name := "leak.pb.gz"
		if r.URL.Query().Get("debug") == "2" {
			name = "leak.debug2.txt"
		}
		http.ServeFile(w, r, filepath.Join(dir, name))
	}))
	defer srv.Close()
	debug2, err := os.ReadFile(filepath.Join(dir, "leak.debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		leaks, by string
		stdin     []byte
	}{
		{filepath.Join(dir, "leak.debug2.txt"), "by goroutine id", nil},
		{filepath.Join(dir, "leak.pb.gz"), "by stack", nil},
		{filepath.Join(dir, "leak.txt"), "by stack", nil},
		{"-", "by goroutine id", debug2},
		{srv.URL + "/debug/pprof/goroutineleak?debug=2", "by goroutine id", nil},
		{srv.URL + "/debug/pprof/goroutineleak", "by stack", nil},
	} {
		code, stdout, stderr := ctxleakStdin(t, strings.NewReader(string(c.stdin)), "holders", dump, "--binary", exe, "--leaks", c.leaks)
		if code != 1 || !leakedGroup.MatchString(stdout) || !heldGroup.MatchString(stdout) ||
			!strings.Contains(stdout, "  leaked    1,500 goroutines proven leaked by the goroutineleak profile, matched "+c.by) ||
			!strings.Contains(stdout, "            1,500 in 1 group below, retaining 23.4 MiB\n") ||
			!strings.Contains(stderr, "1500 goroutines proven leaked retain 23.4 MiB in 1 group") {
			t.Errorf("--leaks %s: exit %d, stderr %q, stdout:\n%s", c.leaks, code, stderr, stdout)
		}
	}

	code, stdout, stderr := ctxleak(t, "holders", dump, "--binary", exe, "--leaks", filepath.Join(dir, "leak.pb.gz"), "--format", "json")
	var doc struct {
		Groups []struct {
			Retained   uint64 `json:"retained_bytes"`
			Goroutines int    `json:"goroutine_count"`
			Leaked     *struct {
				Count    int    `json:"goroutine_count"`
				Wait     string `json:"wait"`
				Retained uint64 `json:"retained_bytes"`
			} `json:"leaked"`
		} `json:"groups"`
		Leaks struct {
			By       string `json:"matched_by"`
			Total    int    `json:"leaked_count"`
			InGroups int    `json:"in_groups_count"`
			Groups   int    `json:"group_count"`
			Retained uint64 `json:"retained_bytes"`
		} `json:"leaks"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("exit %d, stderr %q: %v", code, stderr, err)
	}
	g := doc.Groups
	if len(g) != 2 || g[0].Leaked == nil || g[0].Leaked.Count != 1500 || g[0].Goroutines != 1500 || g[0].Leaked.Wait != "chan send" ||
		g[0].Leaked.Retained != g[0].Retained || g[0].Retained < 1500*16<<10 ||
		g[1].Leaked == nil || g[1].Leaked.Count != 0 || g[1].Goroutines != 200 ||
		doc.Leaks.By != "stack" || doc.Leaks.Total != 1500 || doc.Leaks.InGroups != 1500 || doc.Leaks.Groups != 1 || doc.Leaks.Retained != g[0].Retained {
		t.Errorf("JSON: %s", stdout)
	}
}

// TestHoldersLeaksUnmatched says why leaked goroutines are in no group
// shown: they hold less than --min-size, --focus left their group out, or
// the profile is of another process than the dump.
func TestHoldersLeaksUnmatched(t *testing.T) {
	dir, exe := leaksDump(t)
	dump, leaks := filepath.Join(dir, "leak.heapdump"), filepath.Join(dir, "leak.debug2.txt")
	other, otherExe := holdersDump(t, "goroutine")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{dump, "--binary", exe, "--min-size", "64MiB"}, "            1,500 hold nothing of 64.0 MiB or more\n"},
		{[]string{dump, "--binary", exe, "--focus", "gowrap2"}, "            1,500 in groups not shown (--top, --focus)\n"},

		{[]string{dump, "--leaks", filepath.Join(dir, "leak.pb.gz")}, "(give --binary)"},
	} {
		args := append([]string{"holders", "--leaks", leaks}, c.args...)
		code, stdout, stderr := ctxleak(t, args...)
		if code > 1 || !strings.Contains(stdout, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %q in:\n%s", args, code, stderr, c.want, stdout)
		}
	}
	// Another process's ids: most are in no goroutine of the dump, the
	// few that are name goroutines with other stacks, and none is marked.
	code, stdout, stderr := ctxleak(t, "holders", "--leaks", leaks, other, "--binary", otherExe)
	m := regexp.MustCompile(`(?m)^ +1,(\d\d\d) found in no goroutine of the dump: the profile was taken in another process.*\n(?: +(\d) have ids of goroutines of the dump with other stacks: the profile is of another process or run\n)?`).FindStringSubmatch(stdout)
	if code != 1 || m == nil || mustAtoi(m[1])+mustAtoi(m[2]) != 500 || strings.Contains(stdout, "leaked for ever") {
		t.Errorf("another process's profile: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestHoldersLeaksRefused refuses --leaks inputs that are not a
// goroutineleak profile, exit 2 naming them.
func TestHoldersLeaksRefused(t *testing.T) {
	dump := filepath.Join("testdata", "dumps", "empty.dump")
	tmp := t.TempDir()
	goroutine := filepath.Join(tmp, "goroutine.pb.gz")
	f, err := os.Create(goroutine)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("goroutine").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	huge := filepath.Join(tmp, "huge.txt")
	if err := os.WriteFile(huge, []byte("goroutine 1 [running]:\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, maxLeaksBytes+1); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(tmp, "garbage")
	if err := os.WriteFile(garbage, []byte("goroutine x\x00\xff not a profile"), 0o600); err != nil {
		t.Fatal(err)
	}
	heapDump := filepath.Join(tmp, "dump")
	if err := os.WriteFile(heapDump, []byte(heapDumpHeader+"rest"), 0o600); err != nil {
		t.Fatal(err)
	}
	hugeDump := filepath.Join(tmp, "huge.dump") // the kind is told before the size
	if err := os.WriteFile(hugeDump, []byte(heapDumpHeader), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(hugeDump, maxLeaksBytes+1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		leaks, want string
	}{
		{goroutine, "--leaks " + goroutine + ": a goroutine profile, not a goroutineleak profile"},
		{huge, "--leaks " + huge + ": 83886081 bytes, more than a goroutineleak profile or traceback has"},
		{garbage, "--leaks " + garbage + ": "},
		{heapDump, "--leaks " + heapDump + ": a Go heap dump"},
		{hugeDump, "--leaks " + hugeDump + ": a Go heap dump, not a goroutineleak profile: give it as DUMP"},
		{filepath.Join(tmp, "none"), "--leaks " + filepath.Join(tmp, "none") + ": no such file"},
		{tmp, "--leaks " + tmp + " is a directory"},
		{"-", "--leaks - and DUMP - both read standard input"},
	} {
		d := dump
		if c.leaks == "-" {
			d = "-"
		}
		code, stdout, stderr := ctxleak(t, "holders", d, "--leaks", c.leaks)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("--leaks %s: exit %d, stdout %q, stderr %q; want 2 and %q", c.leaks, code, stdout, stderr, c.want)
		}
	}
}
