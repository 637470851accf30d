package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/internal/dumptest"
	"github.com/ctxleak/ctxleak/internal/testbuild"
	"github.com/google/pprof/profile"
)

// Corrupt and truncated dumps give an error naming the file, the byte
// offset and the record, and exit 2.
func TestHoldersBadDumps(t *testing.T) {
	for _, tt := range []struct {
		file string
		want string
	}{
		{"empty.dump", "empty.dump: offset 0: dump: not a Go heap dump"},
		{"not-a-dump.dump", "not-a-dump.dump: offset 0: dump: not a Go heap dump"},
		{"unknown-tag.dump", "unknown-tag.dump: offset 49: dump: unknown record tag 99"},
		{"truncated-object.dump", "truncated-object.dump: offset 56: object record: contents length 64 past end of file (10 bytes left)"},
		{"huge-length.dump", "huge-length.dump: offset 56: object record: contents length 1099511627776 past end of file"},
		{"truncated.dump", "truncated.dump: offset 5995: type record: type name length 28 past end of file"},
		{"no-such.dump", "no-such.dump: no such file or directory"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			code, stdout, stderr := ctxleak(t, "holders", filepath.Join("testdata", "dumps", tt.file))
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
		})
	}
}

func TestHoldersBadFlags(t *testing.T) {
	dump := filepath.Join("testdata", "dumps", "empty.dump")
	exists := filepath.Join(t.TempDir(), "exists")
	if err := os.WriteFile(exists, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"holders"}, "takes 1 argument, got 0"},
		{[]string{"holders", dump, dump}, "takes 1 argument, got 2"},
		{[]string{"holders", dump, "--format", "xml"}, `invalid --format "xml": want text, json, pprof`},
		{[]string{"holders", dump, "--min-size", "lots"}, `invalid argument "lots" for "--min-size"`},
		{[]string{"holders", dump, "--min-size", "0"}, "invalid --min-size 0"},
		{[]string{"holders", dump, "--top", "-1"}, "invalid --top -1"},
		{[]string{"holders", dump, "--focus", "("}, `invalid --focus "("`},
		{[]string{"holders", dump, "--binary", "testdata/dumps/no-such-exe"}, "--binary testdata/dumps/no-such-exe: no such file"},
		{[]string{"holders", dump, "--binary", "holders_test.go"}, "ctxleak: --binary holders_test.go: not an ELF executable: "},
	} {
		code, _, stderr := ctxleak(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	if b, _ := os.ReadFile(exists); string(b) != "keep me" {
		t.Errorf("a file was overwritten: %q", b)
	}
}

// holdersDump returns a heap dump written by heap/testdata/holders for
// pattern and the executable that wrote it. The program is built once per
// test binary and each pattern dumped once, in dumptest.TempDir (removed by
// TestMain), so tests that read the same dump share it; they only read it.
func holdersDump(t *testing.T, pattern string) (dump, exe string) {
	t.Helper()
	holdersBuild.once.Do(func() {
		holdersBuild.exe = filepath.Join(dumptest.TempDir(t), "holders")
		if out, err := testbuild.Build(holdersBuild.exe, nil, "../../heap/testdata/holders"); err != nil {
			holdersBuild.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if holdersBuild.err != nil {
		t.Fatal(holdersBuild.err)
	}
	holdersBuild.mu.Lock()
	d, ok := holdersBuild.dumps[pattern]
	if !ok {
		d = &holdersPatternDump{}
		holdersBuild.dumps[pattern] = d
	}
	holdersBuild.mu.Unlock()
	d.once.Do(func() {
		d.path = filepath.Join(dumptest.TempDir(t), pattern+".dump")
		if out, err := exec.Command(holdersBuild.exe, pattern, d.path).CombinedOutput(); err != nil {
			d.err = fmt.Errorf("holders %s: %v\n%s", pattern, err, out)
		}
	})
	if d.err != nil {
		t.Fatal(d.err)
	}
	return d.path, holdersBuild.exe
}

// holdersBuild is heap/testdata/holders built once, with its dumps by pattern.
var holdersBuild = struct {
	once  sync.Once
	exe   string
	err   error
	mu    sync.Mutex
	dumps map[string]*holdersPatternDump
}{dumps: map[string]*holdersPatternDump{}}

// holdersPatternDump is one pattern's dump, written once.
type holdersPatternDump struct {
	once sync.Once
	path string
	err  error
}

func TestHoldersReport(t *testing.T) {
	t.Parallel()
	dump, exe := holdersDump(t, "goroutine")

	code, stdout, stderr := ctxleak(t, "holders", dump, "--binary", exe)
	if code != 1 {
		t.Errorf("exit %d, want 1 (retention found); stderr %q", code, stderr)
	}
	for _, want := range []string{
		"frame main.waitThenUse (holders/main.go:",
		"argument -> context.valueCtx",
		".val -> main.Upload",
		".Body -> []uint8",
		"allocated at main.newPayload (holders/main.go:",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "\x1b[") {
		t.Errorf("escape codes in piped output")
	}
	golden(t, filepath.Join("testdata", "golden"), "holders.golden", normalizeHoldersText(stdout, filepath.Dir(dump)))
	text := stdout
	last := strings.TrimSpace(stderr)
	if !strings.HasPrefix(last, "ctxleak: retention found: 1 group of 1.0 MiB or more") || !strings.Contains(last, "frame main.waitThenUse") {
		t.Errorf("last line %q", last)
	}

	// JSON: one document whose groups name the holder, pinned by a golden
	// file.
	code, stdout, _ = ctxleak(t, "holders", dump, "--binary", exe, "--format", "json")
	var rep struct {
		Schema    string `json:"schema"`
		GoVersion string `json:"go_version"`
		Groups    []struct {
			Root struct {
				Kind, Function string
				Goroutine      uint64 `json:"goroutine_id"`
			}
			Object struct {
				Type      string
				AllocSite struct{ Function string } `json:"alloc_site"`
			}
			RetainedBytes uint64 `json:"retained_bytes"`
			ObjectCount   int    `json:"object_count"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 1 {
		t.Fatalf("exit %d, json %v:\n%s", code, err, stdout)
	}
	if rep.Schema != "ctxleak.holders/v2" || len(rep.Groups) != 1 || rep.Groups[0].Root.Function != "main.waitThenUse" ||
		rep.Groups[0].Root.Goroutine == 0 || rep.Groups[0].ObjectCount != 1 || rep.Groups[0].Object.AllocSite.Function != "main.newPayload" {
		t.Errorf("json report %+v", rep)
	}
	golden(t, filepath.Join("testdata", "golden"), "holders-format-json.golden", normalizeHoldersJSON(t, stdout, filepath.Dir(dump)))

	// pprof, to a new file, mode 0600; an existing file is not overwritten.
	out := filepath.Join(t.TempDir(), "holders.pb.gz")
	if code, _, stderr := ctxleak(t, "holders", dump, "--binary", exe, "--format", "pprof", "-o", out); code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, _ := f.Stat(); fi.Mode().Perm() != 0o600 {
		t.Errorf("-o file mode %v", fi.Mode())
	}
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 1 || p.Sample[0].Value[0] != 2<<20 {
		t.Errorf("profile samples %v", p.Sample)
	}
	code, _, stderr = ctxleak(t, "holders", dump, "--binary", exe, "--format", "pprof", "-o", out)
	if code != 2 || !strings.Contains(stderr, "file exists; --force replaces it") {
		t.Errorf("second -o: exit %d, %q", code, stderr)
	}

	// --force replaces the file; -o - is standard output.
	if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := ctxleak(t, "holders", dump, "--binary", exe, "--format", "pprof", "-o", out, "--force"); code != 1 {
		t.Fatalf("-o --force: exit %d: %s", code, stderr)
	}
	replaced, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = ctxleak(t, "holders", dump, "--binary", exe, "--format", "pprof", "-o", "-")
	if code != 1 || stdout != string(replaced) {
		t.Errorf("-o -: exit %d, %d bytes on stdout, want the %d bytes --force wrote; stderr %q", code, len(stdout), len(replaced), stderr)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Errorf("-o - created a file named -")
	}

	// "-" reads the dump from standard input: the same report, naming "-".
	in, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	code, stdout, stderr = ctxleakStdin(t, in, "holders", "-", "--binary", exe)
	if code != 1 || stdout != strings.Replace(text, "heap dump "+dump+" ", "heap dump - ", 1) {
		t.Errorf("holders -: exit %d, stderr %q, report:\n%s", code, stderr, stdout)
	}

	// Nothing matches: clean.
	code, stdout, _ = ctxleak(t, "holders", dump, "--binary", exe, "--focus", "^no-such-thing$")
	if code != 0 || !strings.Contains(stdout, "No group matches (1 group of ") {
		t.Errorf("--focus with no match: exit %d\n%s", code, stdout)
	}
}

// A leaked goroutine that no longer uses its context holds nothing: the
// report is clean, and its JSON lists nothing as [], not null.
func TestHoldersDeadContextClean(t *testing.T) {
	t.Parallel()
	dump, exe := holdersDump(t, "dead-ctx")
	code, stdout, stderr := ctxleak(t, "holders", dump, "--binary", exe)
	if code != 0 || !strings.Contains(stdout, "No object of 1.0 MiB or more is retained") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = ctxleak(t, "holders", dump, "--binary", exe, "--format", "json")
	if code != 0 || !strings.Contains(stdout, `"groups": [],`) || strings.Contains(stdout, "null") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// normalizeHoldersText replaces what varies from one run to the next in the
// text of holders: the temporary directory, the Go version, the dump's
// totals and goroutine ids.
func normalizeHoldersText(text, tmp string) string {
	text = strings.ReplaceAll(text, tmp, "$TMP")
	for _, r := range []struct{ re, with string }{
		{`(?m)^(heap dump \S+ )\(go[^)]*\)`, `${1}(GOVERSION)`},
		{`(?m)^(  (live|dead|shared) +)\d+(\.\d+)? \S+ in \d+ objects`, `${1}N B in N objects`},
		{`; \d+ goroutines`, `; N goroutines`},
		{`goroutine \d+ \[`, `goroutine N [`},
	} {
		text = regexp.MustCompile(r.re).ReplaceAllString(text, r.with)
	}
	return text
}

// normalizeHoldersJSON replaces what varies from one run to the next in the
// JSON of holders: the temporary directory, the repository's and Go's
// directories, the Go version, addresses, goroutine ids, the dump's totals
// (the runtime's own allocations vary), and the line numbers of Go's own
// sources and the allocator's frames (they vary with the Go release).
func normalizeHoldersJSON(t *testing.T, doc, tmp string) string {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	doc = strings.NewReplacer(tmp, "$TMP", repo, "$REPO", strings.TrimSpace(string(goroot)), "$GOROOT").Replace(doc)
	for _, r := range []struct{ re, with string }{
		{`("go_version": )"[^"]*"`, `$1"GOVERSION"`},
		{`("addr": )"0x[0-9a-f]+"`, `$1"0xADDR"`},
		{`("(live|dead|shared)_(bytes|objects)": )\d+`, `${1}0`},
		{`("(goroutine_count|goroutine_id)": )\d+`, `${1}0`},
		{`("goroutine_ids": \[\s*)\d+`, `${1}0`},
		{`("file": "\$GOROOT/[^"]*",\s*"line": )\d+`, `${1}0`},
		// The allocator's own frames on top of an allocation stack:
		// Go 1.26 records them, Go 1.25 does not.
		{`\{\s*"function": "runtime\.(mallocgc[^"]*|makeslice|newobject|growslice)",\s*"file": "\$GOROOT/[^"]*",\s*"line": 0\s*\},\s*`, ``},
	} {
		doc = regexp.MustCompile(r.re).ReplaceAllString(doc, r.with)
	}
	return doc
}

// One dump of three uploads for two tests: its goroutines, and the
// progress line.
func TestHoldersThreeUploads(t *testing.T) {
	t.Parallel()
	dump, exe := holdersDump(t, "three-uploads")
	testHoldersThreeGoroutines(t, dump, exe)
}

// The progress test sets the environment and a package variable, so it
// runs alone.
func TestHoldersProgress(t *testing.T) {
	dump, exe := holdersDump(t, "three-uploads")
	testHoldersProgress(t, dump, exe)
}

// Three uploads held alike by three goroutines: the report, its JSON and
// the summary line give the count of goroutines and their ids.
func testHoldersThreeGoroutines(t *testing.T, dump, exe string) {
	three := `3 goroutines \((\d+), (\d+) and (\d+)\)`
	code, stdout, stderr := ctxleak(t, "holders", dump, "--binary", exe)
	if code != 1 || !regexp.MustCompile(`(?m)^    held by `+three+`, frame main\.waitThenUse \(`).MatchString(stdout) {
		t.Errorf("exit %d; the text does not name the 3 goroutines:\n%s", code, stdout)
	}
	m := regexp.MustCompile(`^ctxleak: retention found: 1 group of 1\.0 MiB or more; the largest, 6\.0 MiB, is held by ` + three + ` frame main\.waitThenUse\n$`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("summary line %q does not name the 3 goroutines", stderr)
	}
	_, stdout, _ = ctxleak(t, "holders", dump, "--binary", exe, "--format", "json")
	var doc struct {
		Groups []struct {
			Goroutines []uint64 `json:"goroutine_ids"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Groups) != 1 || fmt.Sprint(doc.Groups[0].Goroutines) != fmt.Sprintf("[%s %s %s]", m[1], m[2], m[3]) {
		t.Errorf("JSON groups %+v, want one held by goroutines %v", doc.Groups, m[1:])
	}
}

// --max-memory replaces the memory budget of a dump's analysis: under a
// limit too small, holders exits 2 naming the flag and the default; under
// a large one, it reports as without it.
func TestHoldersMaxMemory(t *testing.T) {
	t.Parallel()
	dump, exe := holdersDump(t, "goroutine")
	code, _, stderr := ctxleak(t, "holders", dump, "--binary", exe, "--max-memory", "64KiB")
	if code != 2 || !strings.Contains(stderr, "64.0 KiB of memory with the analysis, the limit given") ||
		!strings.Contains(stderr, "raise the limit with --max-memory (the default for this dump is ") {
		t.Errorf("--max-memory 64KiB: exit %d, want 2 naming the limit and --max-memory; stderr %q", code, stderr)
	}
	code, stdout, stderr := ctxleak(t, "holders", dump, "--binary", exe, "--max-memory", "4GiB")
	if code != 1 || !strings.Contains(stdout, "frame main.waitThenUse") {
		t.Errorf("--max-memory 4GiB: exit %d, want 1 with the report; stderr %q", code, stderr)
	}
	if code, _, stderr := ctxleak(t, "holders", dump, "--max-memory", "lots"); code != 2 || !strings.Contains(stderr, "--max-memory") {
		t.Errorf("--max-memory lots: exit %d, want 2 naming the flag; stderr %q", code, stderr)
	}
}

// --max-dwarf caps what the executable's compressed DWARF may inflate to:
// under what it needs, the run exits 2 naming the section and the flag
// that raises the cap; above, it reads the executable as by default.
func TestHoldersMaxDWARF(t *testing.T) {
	dump, exe := holdersDump(t, "goroutine")
	code, _, stderr := ctxleak(t, "holders", dump, "--binary", exe, "--max-dwarf", "1KiB")
	if code != 2 || !strings.Contains(stderr, "over the limit of 1024 bytes chosen") || !strings.Contains(stderr, "raise the limit with --max-dwarf") {
		t.Errorf("--max-dwarf 1KiB: exit %d, stderr %q; want 2, the limit and the flag", code, stderr)
	}
	code, stdout, stderr := ctxleak(t, "holders", dump, "--binary", exe, "--max-dwarf", "1GiB")
	if code != 1 || !strings.Contains(stdout, "main.") {
		t.Errorf("--max-dwarf 1GiB: exit %d, stdout %q, stderr %q; want 1 and a report", code, stdout, stderr)
	}
}
