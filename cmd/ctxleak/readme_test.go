package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README test: every shell example of README.md, run as written, in
// the order of the README, in a fresh clone of this repository, with
// ctxleak installed by the README's own commands; and each sample output
// (the lines after a "$ command" in a plain ``` block) compared in shape
// with what the command prints today.
//
// Every ```sh block, and every ``` block with a "$ " line, carries a
// marker on the line before it, "<!-- runnable NAME: what TestREADME does
// -->"; NAME says where the block runs (readmeDirs). A block without one
// fails the test, so a new example is run from the day it is written.

// readmeSubstitutions are the README commands TestREADME does not run as
// written, each with what it runs instead ("" for nothing) and why. A
// command is matched without its trailing "# comment". Every entry must
// match a README command, so none outlives its example.
var readmeSubstitutions = []struct{ command, instead, why string }{
	{"go test ./...", "",
		".ci/run runs it as written, as its second step"},
	{"go test -race ./...", "",
		".ci/run runs it as written, as its third step"},
	{"GOTOOLCHAIN=go1.27.3 go test ./...", "",
		".ci/run runs it as written, after the README's commands"},
	{"CTXLEAK_INSTALLED=1 go test -count=1 -run TestInstalled ./cmd/ctxleak", "",
		".ci/run runs it as written, on Go 1.26 and on Go 1.27"},
	{"RUN='^sparse/' bench/hostile.sh", "",
		".ci/run runs it, with OUT a temporary directory"},
	{"GOTOOLCHAIN=go1.25.9 go test -short ./...", "",
		".ci/run runs it as written, as its last step"},
	{"go test -short ./...", "",
		"the tests of .ci/run's second step, less the long ones"},
	{"CTXLEAK_LONG=1 go test -race ./...", "",
		"the tests of .ci/run's third step with their long variants: minutes, not for every CI run"},
	{"go test ./heap ./cmd/ctxleak -update", "go test ./heap ./cmd/ctxleak -update -run 'Golden|GoVersions'",
		"only the tests that write goldens; TestREADME then checks that the goldens did not change"},
	{"testdata/regen.sh", "sh -n testdata/regen.sh",
		"it downloads six Go toolchains; checked for syntax only"},
	{"bench/run-catalogue.sh -runs 20", "bash -n bench/run-catalogue.sh && go vet ./bench/catalogue",
		"benchmarks with wall-time targets that a shared CI machine cannot hold: checked for syntax, the Go behind them vetted"},
	{"bench/holders.sh", "bash -n bench/holders.sh && go vet ./bench/heapgen",
		"writes 2.5 GB of dumps: checked for syntax, the Go behind it vetted"},
	{"bench/heapread.sh", "bash -n bench/heapread.sh && go vet ./bench/heapread",
		"writes 2.5 GB of dumps: checked for syntax, the Go behind it vetted"},
	{"bench/bigheap.sh", "bash -n bench/bigheap.sh && go vet ./bench/heapgen ./bench/heapread",
		"writes 2.1 GB of dumps: checked for syntax, the Go behind it vetted"},
	{"bench/hostile.sh", "bash -n bench/hostile.sh && go vet ./bench/hostile/...",
		"generates 3 GB of hostile inputs and runs ctxleak 580 times: checked for syntax, the Go behind it vetted"},
	{"go test -run '^$' -fuzz FuzzRead -fuzztime 10m -fuzzminimizetime 1s ./heapdump", "",
		"ten minutes of fuzzing; .ci/run's test steps run FuzzRead's seed corpus"},
	{"go test -run '^$' -fuzz FuzzAnalyze -fuzztime 10m -fuzzminimizetime 1s ./heap", "",
		"ten minutes of fuzzing; .ci/run's test steps run FuzzAnalyze's seed corpus"},
	{"go test -run '^$' -fuzz FuzzDominators -fuzztime 10m ./heap/internal/dom", "",
		"ten minutes of fuzzing; .ci/run's test steps run FuzzDominators's seed corpus"},
	{"go test -run '^$' -fuzz FuzzOpen -fuzztime 10m ./binsym", "",
		"ten minutes of fuzzing; .ci/run's test steps run FuzzOpen's seed corpus"},
	{"go test -run '^$' -fuzz FuzzDWARFTypes -fuzztime 10m ./binsym", "",
		"ten minutes of fuzzing; .ci/run's test steps run FuzzDWARFTypes's seed corpus"},
	{"go test -run '^$' -fuzz FuzzLocationList -fuzztime 10m ./binsym", "",
		"ten minutes of fuzzing; .ci/run's test steps run FuzzLocationList's seed corpus"},
	{"go test -run '^$' -fuzz FuzzParse -fuzztime 10m ./profiles", "",
		"ten minutes of fuzzing; .ci/run's test steps run FuzzParse's seed corpus"},
	{"go test -run '^$' -fuzz FuzzCostStream -fuzztime 10m ./profiles", "",
		"ten minutes of fuzzing; .ci/run's test steps run FuzzCostStream's seed corpus"},
	{"go test -run '^$' -fuzz FuzzEscape -fuzztime 10m ./internal/textsafe", "",
		"ten minutes of fuzzing; .ci/run's test steps run FuzzEscape's seed corpus"},
	{"git clone https://github.com/ctxleak/ctxleak ../ctxleak", "git clone \"$CTXLEAK_REPO\" ../ctxleak",
		"the module is not published: the clone is of the checkout under test"},
	{"CTXLEAK_README=1 go test -count=1 -run TestREADME ./cmd/ctxleak", "",
		"this test; .ci/run runs it as written"},
	{"ctxleak cost", "ctxleak cost --quick",
		"the full run takes a minute; --quick prints the same rows from shorter samples"},
	{"ctxleak holders app.heapdump --binary ./app --http :0", readmeWebCheck,
		"a server runs until Ctrl-C and opens a browser: the test serves on a free port without one, reads the groups page and stops it with SIGINT (exit 130)"},
	{"ctxleak holders app.heapdump --binary ./app --http 127.0.0.1:8080 --no-browser", readmeWebCheck,
		"port 8080 may be taken on a CI machine: the same check on a free port"},
}

// readmeWebCheck stands for the web view's commands: it serves on a free
// port without opening a browser, waits for the URL, reads the groups page,
// then stops the server with SIGINT, which must exit 130.
const readmeWebCheck = "ctxleak holders app.heapdump --binary ./app --http 127.0.0.1:0 --no-browser > web.out & pid=$!; " +
	"for i in $(seq 300); do grep -q http:// web.out && break; sleep 0.1; done; " +
	"curl -fsS \"$(grep -o 'http://[^ ]*' web.out)\" | grep -q '<h1>Holders</h1>'; got=$?; " +
	"kill -INT $pid; wait $pid; test $got = 0 -a $? = 130"

// readmeService is the host and port of the README's running service,
// which the examples of "ctxleak analyze" and "In a running service" use;
// TestREADME runs cmd/ctxleak/testdata/uploads there instead, on a free
// port, and writes the port back in their output.
const readmeService = "localhost:6060"

// stalePhrases are wordings ctxleak no longer prints (issue 14); none may
// remain in a README sample.
var stalePhrases = []string{
	"object(s)", "[]uint8 > []uint8", "None of the 1 groups", "(+1 objects)",
	"groups of 33 groups", "ctxleak devel", "--binary: binary ",
}

// readmeDirs says where the blocks of each NAME run: the clone's root, the
// directory the try-it block makes (its heap dump and ./app), the
// directory of the running service (whose executable is ./app), or a new
// module next to the clone.
var readmeDirs = map[string]string{
	"top": "root", "try-it": "root", "run": "root", "run-sample": "root",
	"cost-sample": "root", "development": "root",
	"holders": "try-it", "holders-sample": "try-it", "web": "try-it", "timer-sample": "try-it",
	"analyze-sample": "service", "watch-holders": "service",
	"clone": "app-replace", "replace": "app-replace", "work": "app-work",
	"upload-test": "shop", "upload-go": "shop", "retain-sample": "shop",
	"watch-report": "service",
}

// readmeGoFiles are the Go blocks TestREADME writes, by NAME, as files of
// the module example.com/shop of "Use it in your tests".
var readmeGoFiles = map[string]string{
	"upload-test": "upload/upload_test.go",
	"upload-go":   "upload/upload.go",
}

// TestREADMEBlocks checks, without running anything, what TestREADME
// needs of README.md: every shell example marked, every substitution
// matching a README command, every fuzzing command substituted, no stale
// wording in a sample.
func TestREADMEBlocks(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := parseREADME(t, readme)
	for _, p := range stalePhrases {
		if i := bytes.Index(readme, []byte(p)); i >= 0 {
			t.Errorf("README.md:%d: %q is no longer what ctxleak prints", bytes.Count(readme[:i], []byte("\n"))+1, p)
		}
	}
	used := map[string]bool{}
	for _, b := range blocks {
		for _, c := range b.commands {
			used[strings.TrimSpace(trailingComment.ReplaceAllString(c.text, ""))] = true
		}
	}
	substituted := map[string]bool{}
	for _, s := range readmeSubstitutions {
		substituted[s.command] = true
		if !used[s.command] {
			t.Errorf("the substitution of %q matches no README command: remove it", s.command)
		}
	}
	// A fuzzing command run as written would run for its -fuzztime, past
	// TestREADME's time limit.
	for c := range used {
		if strings.Contains(c, " -fuzz ") && !substituted[c] {
			t.Errorf("README command %q fuzzes: give it a substitution (readmeSubstitutions)", c)
		}
	}
	files := map[string]bool{}
	for _, b := range blocks {
		if b.goFile != "" {
			files[b.name] = true
		}
	}
	for name := range readmeGoFiles {
		if !files[name] {
			t.Errorf("README.md has no Go block marked runnable %s", name)
		}
	}
}

func TestShape(t *testing.T) {
	for _, tt := range []struct{ readme, today string }{
		{"| request-running  | alive   |    +50.0 MiB |   +51.6 MiB |          - |   50.0 MiB |",
			"| request-running | alive | +50.0 MiB | +9.7 KiB | - | 0 B |"},
		{"+-----+------+", "+--+---------+"},
		{"with-value                  123 ns (74–184 ns)      48 B   1", "with-value 87.9 ns 48 B 1   "},
		{"    held by goroutine 21 [chan receive], frame main.audit (upload/upload.go:21)",
			"    held by goroutine 9 [chan receive], frame main.audit (upload/upload.go:22)"},
		{"  heap dump: /tmp/ctxleak-T-1/T-2.heapdump", "  heap dump: /tmp/TestREADME3/002/ctxleak-T-4/T-5.heapdump"},
		{"| timeout-not-cancelled     | as expected | alive > alive > freed | 69.3 MiB | 1.39 s |",
			"| timeout-not-cancelled     | as expected | alive > alive > freed (2 GCs) | 66.6 MiB | 1.12 s |"},
		{"  server-arguments     17636 (17228–22671)  1×                      362 µs (266–368 µs)  2.22 ms (1.82–2.5 ms)",
			"  server-arguments     38602 (35861–45331)  1×                      156 µs (135–164 µs)  996 µs (722–1.57 ms)"},
		{"time and allocations per operation, 2ms per sample", "time and allocations per operation, 500µs per sample"},
	} {
		if a, b := shape(tt.readme), shape(tt.today); a != b {
			t.Errorf("shape(%q) = %q\nshape(%q) = %q", tt.readme, a, tt.today, b)
		}
	}
	for _, tt := range []struct{ readme, today string }{
		{"    via context.valueCtx > []uint8 > []uint8", "    via context.valueCtx > []uint8 of 50.0 MiB"},
		{"| payload | alive |", "| payload | freed |"},
		{"held by goroutine 5 frame main.a", "held by 3 goroutines (5, 6 and 7) frame main.a"},
		{"| pool | as expected | alive > freed (2 GCs) |", "| pool | as expected | alive > alive |"},
		{"with-value 45.1 ns (36.9–47.1 ns) 48 B 1", "with-value 45.1 ns (36.9–47.1 ns) 48 B"},
	} {
		if a, b := shape(tt.readme), shape(tt.today); a == b {
			t.Errorf("shape(%q) = shape(%q) = %q, want them told apart", tt.readme, tt.today, a)
		}
	}
}

// TestREADME follows README.md as a reader with a fresh clone would: it
// clones the repository as "Use it from another module" says (from this
// checkout, with its uncommitted changes copied over), then runs every
// shell example in the README's order, the holders examples twice, and
// compares each sample output with what its command prints today.
func TestREADME(t *testing.T) {
	skipUnlessREADME(t)
	if testing.Short() {
		t.Skip("-short: the README test builds and installs ctxleak")
	}
	t.Parallel()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := parseREADME(t, readme)
	if t.Failed() {
		t.FailNow()
	}
	root, tmp, gobin := t.TempDir(), t.TempDir(), t.TempDir()
	r := &readmeRun{
		t:       t,
		outputs: map[string]string{},
		dirs: map[string]string{
			"root":        filepath.Join(root, "ctxleak"),
			"service":     filepath.Join(root, "service"),
			"app-replace": filepath.Join(root, "app-replace"),
			"app-work":    filepath.Join(root, "app-work"),
			"shop":        filepath.Join(root, "shop"),
		},
		service: readmeService,
	}
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "CTXLEAK_README", "CTXLEAK_LONG", "COLUMNS", "GOFLAGS", "NO_COLOR":
		default:
			env = append(env, kv)
		}
	}
	r.env = append(env, "TMPDIR="+tmp, "GOBIN="+gobin, "NO_COLOR=1", "CTXLEAK_REPO="+repo,
		"PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, app := range []string{"app-replace", "app-work"} {
		files := map[string]string{"main.go": retainProgram}
		if app == "app-replace" {
			files["go.sum"] = moduleSum(t) // for go mod tidy
		}
		newModule(t, r.dirs[app], "example.com/app", files)
	}
	shop := map[string]string{} // the Go files of "Use it in your tests"
	shopMade := false

	// The clone first: everything else runs in it.
	for _, b := range blocks {
		if b.name == "clone" {
			r.block("app-replace", b.commands, false)
		}
	}
	if _, err := os.Stat(filepath.Join(r.dirs["root"], "go.mod")); err != nil {
		t.Fatalf("the README's clone block made no checkout: %v", err)
	}
	overlay(t, repo, r.dirs["root"])
	// The modules next to the clone build offline (envFor), from the
	// module cache: it must hold every module the clone's go.mod lists,
	// which a build on one system does not all fetch (cobra's mousetrap,
	// for Windows, which the workspace asks for).
	download := exec.Command("go", "mod", "download")
	download.Dir, download.Env = r.dirs["root"], r.env
	if out, err := download.CombinedOutput(); err != nil {
		t.Fatalf("go mod download in the clone: %v\n%s", err, out)
	}
	goldens := gitStatus(t, r.dirs["root"])

	for _, b := range blocks {
		where := readmeDirs[b.name]
		switch {
		case b.name == "clone":
			continue
		case where == "try-it" && r.dirs["try-it"] == "":
			t.Fatalf("README.md:%d: block %s runs in the try-it directory, which no earlier block made", b.line, b.name)
		case where == "service" && r.service == readmeService:
			r.service, _ = startService(t, r, "-grace", "1h")
		}
		if b.goFile != "" {
			shop[readmeGoFiles[b.name]] = b.goFile
			continue
		}
		if b.report != nil {
			r.watchReport(b)
			continue
		}
		if where == "shop" && !shopMade {
			// The module of "Use it in your tests", made as "Use it from
			// another module" says.
			shopMade = true
			shop["go.sum"] = moduleSum(t) // for go mod tidy
			newModule(t, r.dirs["shop"], "example.com/shop", shop)
			for _, rb := range blocks {
				if rb.name == "replace" {
					r.block("shop", rb.commands, true)
				}
			}
		}
		if b.sample {
			r.sample(b)
			continue
		}
		runs := 1
		if b.name == "holders" {
			runs = 2 // running an example again works too (issue 14, point 1)
		}
		for i := range runs {
			outs := r.block(where, b.commands, i > 0)
			checkBlock(t, r, b, outs)
		}
		if b.name == "replace" || b.name == "work" {
			// Either way, a program importing retain builds and vets.
			r.block(where, []readmeCommand{{text: "go vet ./..."}, {text: "go build -o app ."}}, true)
		}
		if b.name == "development" {
			if now := gitStatus(t, r.dirs["root"]); now != goldens {
				t.Errorf("go test -update changed tracked files of the clone:\n%s\nwas:\n%s", now, goldens)
			}
		}
	}
}

// checkBlock checks what the README promises of a block beyond its exit
// statuses, and records where the try-it block left its files.
func checkBlock(t *testing.T, r *readmeRun, b readmeBlock, outs []string) {
	t.Helper()
	all := strings.Join(outs, "\n")
	switch b.name {
	case "try-it":
		dumps, _ := filepath.Glob(filepath.Join(r.envValue("TMPDIR"), "*", "app.heapdump"))
		if len(dumps) != 1 {
			t.Fatalf("the try-it block made %d dumps under TMPDIR, want 1: %q", len(dumps), dumps)
		}
		r.dirs["try-it"] = filepath.Dir(dumps[0])
		if !strings.Contains(all, "frame main.waitThenUse") {
			t.Errorf("the try-it block does not name the holder:\n%s", all)
		}
	case "holders":
		if !strings.Contains(all, "frame main.waitThenUse") || strings.Count(all, "heap dump - (") != 1 {
			t.Errorf("the holders examples:\n%s", all)
		}
	case "run", "top":
		// Every scenario of a text run behaves as the catalogue expects.
		for i, c := range b.commands {
			if !strings.HasPrefix(c.text, "go run ./cmd/ctxleak run") || strings.Contains(c.text, "--format") || strings.Contains(c.text, "--list") {
				continue
			}
			if m := allAsExpected.FindStringSubmatch(outs[i]); m == nil || m[1] != m[2] {
				t.Errorf("%s: not every scenario as expected:\n%s", c.text, outs[i])
			}
		}
	}
}

var allAsExpected = regexp.MustCompile(`(\d+) of (\d+) scenarios as expected`)

// skipUnlessREADME skips the tests that build and install the module as the
// README tells a new user to, unless CTXLEAK_README or CTXLEAK_LONG is set:
// they compile for seconds, so .ci/run runs them in a step of their own and
// the README's test command stays within its minute.
func skipUnlessREADME(t *testing.T) {
	t.Helper()
	if os.Getenv("CTXLEAK_README") == "" && os.Getenv("CTXLEAK_LONG") == "" {
		t.Skip("set CTXLEAK_README=1 (as .ci/run does) to run the README's commands")
	}
}
