package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
	{"go test -race ./...", "",
		".ci/run runs it as written, as its second step"},
	{"GOTOOLCHAIN=go1.25.9 go test -short ./...", "",
		".ci/run runs it as written, as its last step"},
	{"go test -short ./...", "",
		"the tests of .ci/run's second step, less the long ones and without -race"},
	{"CTXLEAK_LONG=1 go test -race ./...", "",
		"the tests of .ci/run's second step with their long variants: minutes, not for every CI run"},
	{"go test ./heap ./cmd/ctxleak -update", "go test ./heap ./cmd/ctxleak -update -run 'Golden|GoVersions'",
		"only the tests that write goldens; TestREADME then checks that the goldens did not change"},
	{"testdata/regen.sh", "sh -n testdata/regen.sh",
		"it downloads five Go toolchains; checked for syntax only"},
	{"bench/run-catalogue.sh -runs 20", "bash -n bench/run-catalogue.sh && go vet ./bench/catalogue",
		"benchmarks with wall-time targets that a shared CI machine cannot hold: checked for syntax, the Go behind them vetted"},
	{"bench/holders.sh", "bash -n bench/holders.sh && go vet ./bench/heapgen",
		"writes 2.5 GB of dumps: checked for syntax, the Go behind it vetted"},
	{"bench/heapread.sh", "bash -n bench/heapread.sh && go vet ./bench/heapread",
		"writes 2.5 GB of dumps: checked for syntax, the Go behind it vetted"},
	{"go test -run '^$' -fuzz FuzzRead -fuzztime 10m ./heapdump", "",
		"ten minutes of fuzzing; .ci/run's second step runs FuzzRead's seed corpus"},
	{"go test -run '^$' -fuzz FuzzAnalyze -fuzztime 10m -fuzzminimizetime 1s ./heap", "",
		"ten minutes of fuzzing; .ci/run's second step runs FuzzAnalyze's seed corpus"},
	{"git clone https://github.com/ctxleak/ctxleak ../ctxleak", "git clone \"$CTXLEAK_REPO\" ../ctxleak",
		"the module is not published: the clone is of the checkout under test"},
	{"CTXLEAK_README=1 go test -count=1 -run TestREADME ./cmd/ctxleak", "",
		"this test; .ci/run runs it as written"},
	{"ctxleak cost", "ctxleak cost --quick",
		"the full run takes a minute; --quick prints the same rows from shorter samples"},
}

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
	"holders": "try-it", "holders-sample": "try-it", "timer-sample": "try-it",
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

// readmeBlock is a shell block of README.md, a sample block with its
// "$ " commands, or a Go file of readmeGoFiles.
type readmeBlock struct {
	name string // from the runnable marker
	line int    // README line of the opening fence
	// sample is set for a plain ``` block of commands and their output.
	sample   bool
	commands []readmeCommand
	goFile   string // the Go source, for a block of readmeGoFiles
	// report is the watch report sample, which no command prints: the
	// service writes it (watchReport).
	report []string
}

// readmeCommand is one command of a block (continuation lines joined) and,
// in a sample, the output the README shows for it. A sample command whose
// output shows a failure ("FAIL" or "--- FAIL" lines) may exit 1.
type readmeCommand struct {
	text    string
	output  []string
	mayFail bool
}

var runnableMarker = regexp.MustCompile(`^<!-- runnable ([a-z-]+):`)

// parseREADME returns the shell and sample blocks of README.md, in order.
func parseREADME(t *testing.T, data []byte) []readmeBlock {
	t.Helper()
	lines := strings.Split(string(data), "\n")
	var blocks []readmeBlock
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		isSample := lang == "" && slicesContainsPrefix(body, "$ ")
		name := ""
		if start > 0 {
			if m := runnableMarker.FindStringSubmatch(lines[start-1]); m != nil {
				name = m[1]
			}
		}
		if _, isFile := readmeGoFiles[name]; isFile && lang == "go" {
			blocks = append(blocks, readmeBlock{name: name, line: start + 1, goFile: strings.Join(body, "\n") + "\n"})
			continue
		}
		if name == "watch-report" && lang == "" {
			blocks = append(blocks, readmeBlock{name: name, line: start + 1, report: body})
			continue
		}
		if lang != "sh" && !isSample {
			continue
		}
		if _, known := readmeDirs[name]; !known {
			t.Errorf("README.md:%d: a shell example without a known <!-- runnable NAME: --> marker on the line before (%q); TestREADME runs every one", start+1, name)
			continue
		}
		b := readmeBlock{name: name, line: start + 1, sample: isSample}
		for j := 0; j < len(body); j++ {
			l := body[j]
			if isSample {
				cmd, isCmd := strings.CutPrefix(l, "$ ")
				if !isCmd {
					if n := len(b.commands); n > 0 && l != "..." {
						b.commands[n-1].output = append(b.commands[n-1].output, l)
						if strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "--- FAIL") {
							b.commands[n-1].mayFail = true
						}
					}
					continue
				}
				l = cmd
			} else if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			for strings.HasSuffix(l, `\`) && j+1 < len(body) {
				j++
				l = strings.TrimSpace(strings.TrimSuffix(l, `\`)) + " " + strings.TrimSpace(body[j])
			}
			b.commands = append(b.commands, readmeCommand{text: l})
		}
		blocks = append(blocks, b)
	}
	return blocks
}

func slicesContainsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// withoutComment is a command without its trailing "# comment".
var trailingComment = regexp.MustCompile(`\s+#.*$`)

// readmeRun runs README commands in a fresh clone and remembers what each
// printed.
type readmeRun struct {
	t       *testing.T
	env     []string
	dirs    map[string]string // readmeDirs' values to directories
	service string            // host:port of the running service
	outputs map[string]string // outputKey -> output
}

// substitute returns the command to run for a README command, or "" with
// the reason it is not run.
func (r *readmeRun) substitute(cmd string) (run, skipped string) {
	key := strings.TrimSpace(trailingComment.ReplaceAllString(cmd, ""))
	for _, s := range readmeSubstitutions {
		if s.command == key {
			if s.instead == "" {
				return "", s.why
			}
			cmd = s.instead
			break
		}
	}
	if strings.Contains(cmd, readmeService) {
		cmd = strings.ReplaceAll(cmd, readmeService, r.service)
	}
	return cmd, ""
}

// maxStatus is the highest exit status a README command may end with: 1
// for a line whose last command is ctxleak (1 means retention found, and
// the README chains viewers with ";"), 0 for the others.
func maxStatus(cmd string) int {
	parts := strings.Split(cmd, ";")
	last := strings.TrimSpace(parts[len(parts)-1])
	if strings.HasPrefix(last, "ctxleak ") || strings.HasPrefix(last, "go run ./cmd/ctxleak ") {
		return 1
	}
	return 0
}

// outputKey is the key of what a command printed in dir: the command
// without its comment.
func outputKey(dir, cmd string) string {
	return dir + "\x00" + strings.TrimSpace(trailingComment.ReplaceAllString(cmd, ""))
}

// marker separates the output of one command from the next.
const marker = "\x1eREADME-COMMAND "

// block runs cmds in one bash in dir, as a reader pasting them would, each
// line's status checked: the first to fail ends the test. It records and
// returns each command's output. A command the README repeats (the
// catalogue, at the top and in its section) runs once in a directory, its
// output standing for both, unless again is set or it changes what the
// shell or the directory holds (a cd, an assignment, a redirection).
func (r *readmeRun) block(where string, cmds []readmeCommand, again bool) []string {
	r.t.Helper()
	dir := r.dirs[where]
	var script strings.Builder
	script.WriteString("set -u -o pipefail\n")
	var ran []int
	outputs := make([]string, len(cmds))
	for i, c := range cmds {
		run, skipped := r.substitute(c.text)
		if run == "" {
			r.t.Logf("not run: %s (%s)", c.text, skipped)
			continue
		}
		if out, done := r.outputs[outputKey(dir, c.text)]; done && !again && !strings.ContainsAny(run, "=>") && !strings.HasPrefix(run, "cd ") {
			r.t.Logf("run before in %s: %s", where, c.text)
			outputs[i] = out
			continue
		}
		ran = append(ran, i)
		max := maxStatus(run)
		if c.mayFail {
			max = 1
		}
		fmt.Fprintf(&script, "printf '%s%d\\n'\n%s\ns=$?; if [ $s -gt %d ]; then echo %s >&2; exit 1; fi\n",
			marker, i, run, max, shellQuote(fmt.Sprintf("README command failed (exit $s): %s", run)))
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir, cmd.Env = dir, r.envFor(where)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r.t.Logf("ran %d commands in %s (%s): %.1f s", len(ran), where, dir, time.Since(start).Seconds())
	for _, part := range strings.Split(out.String(), marker)[1:] {
		num, text, _ := strings.Cut(part, "\n")
		i, _ := strconv.Atoi(num)
		if i >= 0 && i < len(cmds) {
			outputs[i] = strings.ReplaceAll(text, r.service, readmeService)
			r.outputs[outputKey(dir, cmds[i].text)] = outputs[i]
		}
	}
	if err != nil {
		r.t.Fatalf("README commands in %s: %v\n%s", dir, err, out.String())
	}
	return outputs
}

// shellQuote quotes s for bash, keeping "$s" expanded.
func shellQuote(s string) string {
	return `"` + strings.NewReplacer(`"`, `\"`, "`", "\\`", `\`, `\\`).Replace(s) + `"`
}

// sample checks a sample block: each command's output lines, in shape, are
// lines its real output has (in any order, "..." standing for lines left
// out). A command run before in the same place is not run again. With
// CTXLEAK_README_OUT=DIR, each command and its output today go to
// DIR/NAME-N.txt, to regenerate the README's samples from.
func (r *readmeRun) sample(b readmeBlock) {
	r.t.Helper()
	dir := r.dirs[readmeDirs[b.name]]
	var todo []readmeCommand
	for _, c := range b.commands {
		if _, done := r.outputs[outputKey(dir, c.text)]; !done {
			todo = append(todo, c)
		}
	}
	if len(todo) > 0 {
		r.block(readmeDirs[b.name], todo, false)
	}
	for i, c := range b.commands {
		got := r.outputs[outputKey(dir, c.text)]
		if out := os.Getenv("CTXLEAK_README_OUT"); out != "" {
			// What the sample would be today, to paste into the README.
			name := filepath.Join(out, fmt.Sprintf("%s-%d.txt", b.name, i+1))
			if err := os.WriteFile(name, []byte("$ "+c.text+"\n"+got), 0o644); err != nil {
				r.t.Error(err)
			}
		}
		have := map[string]bool{}
		for _, l := range strings.Split(got, "\n") {
			have[shape(l)] = true
		}
		var missing []string
		for _, l := range c.output {
			if strings.TrimSpace(l) != "" && !have[shape(l)] {
				missing = append(missing, l)
			}
		}
		if len(missing) > 0 {
			r.t.Errorf("README.md:%d: the sample output of %q has %d lines the command no longer prints, first:\n  %s\nwhat it prints today:\n%s",
				b.line, c.text, len(missing), missing[0], got)
		}
	}
}

var (
	shapeInterval = regexp.MustCompile(`\s*\([^()]*–[^()]*\)`)
	shapeSize     = regexp.MustCompile(`[+-]?\d[\d.,]*\s?(B|KiB|MiB|GiB)\b`)
	shapeNumber   = regexp.MustCompile(`\d+(\.\d+)?`)
	shapeDashes   = regexp.MustCompile(`--+`)
	shapeSpaces   = regexp.MustCompile(`\s+`)
	shapeDirs     = regexp.MustCompile(`(^|\s)(/[^\s/]+)+/`)
)

// shape is a line of output without what changes from run to run: sizes,
// numbers (goroutine ids, lines, times, versions), confidence intervals,
// the directories of absolute paths (TMPDIR), the widths of table columns
// and trailing space.
func shape(l string) string {
	l = shapeDirs.ReplaceAllString(l, "$1/DIR/")
	l = shapeInterval.ReplaceAllString(l, "")
	l = shapeSize.ReplaceAllString(l, "SIZE")
	l = shapeNumber.ReplaceAllString(l, "0")
	l = shapeDashes.ReplaceAllString(l, "-")
	return strings.TrimSpace(shapeSpaces.ReplaceAllString(l, " "))
}

// TestREADMEBlocks checks, without running anything, what TestREADME
// needs of README.md: every shell example marked, every substitution
// matching a README command, no stale wording in a sample.
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
	for _, s := range readmeSubstitutions {
		if !used[s.command] {
			t.Errorf("the substitution of %q matches no README command: remove it", s.command)
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
	} {
		if a, b := shape(tt.readme), shape(tt.today); a != b {
			t.Errorf("shape(%q) = %q\nshape(%q) = %q", tt.readme, a, tt.today, b)
		}
	}
	for _, tt := range []struct{ readme, today string }{
		{"    via context.valueCtx > []uint8 > []uint8", "    via context.valueCtx > []uint8 of 50.0 MiB"},
		{"| payload | alive |", "| payload | freed |"},
		{"held by goroutine 5 frame main.a", "held by 3 goroutines (5, 6 and 7) frame main.a"},
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
		newModule(t, r.dirs[app], "example.com/app", map[string]string{"main.go": retainProgram})
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

// envFor is the environment of the commands run in where: the modules
// next to the clone build offline, from the module cache the clone's own
// build filled, as a replace directive or workspace allows.
func (r *readmeRun) envFor(where string) []string {
	switch where {
	case "app-replace", "shop":
		return append(r.env, "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=")
	case "app-work":
		return append(r.env, "GOPROXY=off")
	}
	return r.env
}

// envValue is the value of key in the README commands' environment.
func (r *readmeRun) envValue(key string) string {
	for i := len(r.env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(r.env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// retainProgram is a program that imports retain, for the modules of "Use
// it from another module".
const retainProgram = "package main\n\nimport \"github.com/ctxleak/ctxleak/retain\"\n\nfunc main() {\n\t_ = retain.NewTracker\n}\n"

// newModule makes a module in dir: its go.mod and files.
func newModule(t *testing.T, dir, path string, files map[string]string) {
	t.Helper()
	files["go.mod"] = "module " + path + "\n\ngo 1.25.0\n"
	for name, text := range files {
		name = filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// overlay checks out repo's commit in the clone and copies over the files
// repo has changed, added or deleted since it: the clone is then what CI
// checks out, with the changes not yet committed.
func overlay(t *testing.T, repo, clone string) {
	t.Helper()
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	if head := strings.TrimSpace(git(repo, "rev-parse", "HEAD")); strings.TrimSpace(git(clone, "rev-parse", "HEAD")) != head {
		git(clone, "checkout", "-q", "--detach", head)
	}
	changed := strings.Split(git(repo, "ls-files", "-z", "--modified", "--others", "--exclude-standard"), "\x00")
	for _, name := range changed {
		if name == "" {
			continue
		}
		src, dst := filepath.Join(repo, name), filepath.Join(clone, name)
		info, err := os.Stat(src)
		if err != nil {
			os.Remove(dst)
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, info.Mode()&fs.ModePerm); err != nil {
			t.Fatal(err)
		}
	}
}

// gitStatus lists the tracked files of the checkout in dir that differ
// from its commit.
func gitStatus(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	diff, _ := exec.Command("git", "-C", dir, "diff").Output()
	return string(out) + string(diff)
}

// startService builds cmd/ctxleak/testdata/uploads from the clone as
// ./app of the service directory, once, and starts it with args on a free
// port of 127.0.0.1; it stops when the test ends. It returns the service's
// host and port, and its stderr (where it writes its watch reports) so far.
func startService(t *testing.T, r *readmeRun, args ...string) (string, func() string) {
	t.Helper()
	dir := r.dirs["service"]
	if _, err := os.Stat(filepath.Join(dir, "app")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		build := exec.Command("go", "build", "-o", filepath.Join(dir, "app"), "./cmd/ctxleak/testdata/uploads")
		build.Dir, build.Env = r.dirs["root"], r.env
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building the service: %v\n%s", err, out)
		}
	}
	cmd := exec.Command("./app", append(args, "-until-eof")...)
	cmd.Dir, cmd.Env = dir, r.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the service exits when its standard input closes
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the service printed no address: %v", err)
	}
	go io.Copy(io.Discard, stdout)
	return strings.TrimPrefix(strings.TrimSpace(line), "http://"), stderr.String
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// watchReport checks the README's watch report sample against a real
// report: a second service, with a grace of a second, gets as many uploads
// as the sample counts, and writes its report on stderr.
func (r *readmeRun) watchReport(b readmeBlock) {
	t := r.t
	t.Helper()
	m := regexp.MustCompile(`(\d+) values outlived their grace`).FindStringSubmatch(strings.Join(b.report, "\n"))
	if m == nil {
		t.Fatalf("README.md:%d: the watch report sample says no \"N values outlived their grace\"", b.line)
	}
	n, _ := strconv.Atoi(m[1])
	host, stderr := startService(t, r, "-grace", "1s")
	for i := range n {
		resp, err := http.Post("http://"+host+"/upload", "text/plain", strings.NewReader(fmt.Sprintf("upload %d", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// The report is complete when it has a section per value, each
	// starting with the value's quoted label.
	complete := func() bool {
		got := stderr()
		return strings.Contains(got, "outlived") && strings.Count(got, "\n\"") >= n && strings.HasSuffix(got, "\n")
	}
	deadline := time.Now().Add(60 * time.Second)
	for d := 10 * time.Millisecond; !complete(); d = min(2*d, time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("no complete watch report 60 s after %d uploads; stderr:\n%s", n, stderr())
		}
		time.Sleep(d)
	}
	got := stderr()
	have := map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		have[shape(l)] = true
	}
	for _, l := range b.report {
		if l != "..." && strings.TrimSpace(l) != "" && !have[shape(l)] {
			t.Errorf("README.md:%d: the watch report sample has a line the service no longer writes:\n  %s\nwhat it writes today:\n%s", b.line, l, got)
			return
		}
	}
	if out := os.Getenv("CTXLEAK_README_OUT"); out != "" {
		os.WriteFile(filepath.Join(out, b.name+".txt"), []byte(got), 0o644)
	}
}

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
