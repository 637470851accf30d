package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Running README commands for TestREADME: in one bash per block, in a
// fresh clone or a module next to it, each command's output kept.

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
		fmt.Fprintf(&script, "printf '%s%d\\n'\n%s\ns=$?; if [ $s -gt %d ]; then echo \"README command failed (exit $s): \"%s >&2; exit 1; fi\n",
			marker, i, run, max, shellQuote(run))
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

// shellQuote quotes s for bash, as one word taken literally.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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

// moduleSum returns this module's go.sum, with which the modules that
// require ctxleak through a replace directive start: on a machine that
// reaches the module proxy but not the checksum database
// (sum.golang.org), their go mod tidy could not verify the modules
// ctxleak pins, and would fail.
func moduleSum(t *testing.T) string {
	t.Helper()
	sum, err := os.ReadFile(filepath.Join("..", "..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	return string(sum)
}

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
