package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlock returns the lines of the ```sh block of README.md that the
// line "<!-- runnable NAME: ... -->" marks.
func readmeBlock(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "<!-- runnable "+name+":") || lines[i+1] != "```sh" {
			continue
		}
		var block []string
		for i += 2; i < len(lines) && lines[i] != "```"; i++ {
			block = append(block, lines[i])
		}
		return block
	}
	t.Fatalf("README.md has no block marked runnable %s", name)
	return nil
}

// readmeScript turns a README block into a shell script that runs its lines
// as written, in one shell, and stops at the first that fails: exit 2 or
// more, or 1 from a line that does not run ctxleak (whose 1 means
// "retention found", as the README says).
func readmeScript(block []string) string {
	var b strings.Builder
	for _, line := range block {
		if strings.TrimSpace(line) == "" {
			continue
		}
		max := 0
		if strings.HasPrefix(line, "ctxleak ") {
			max = 1
		}
		fmt.Fprintf(&b, "%s\ns=$?; if [ $s -gt %d ]; then echo \"README line failed (exit $s): %s\" >&2; exit 1; fi\n",
			line, max, strings.ReplaceAll(line, `"`, `\"`))
	}
	return b.String()
}

// TestREADME runs the runnable examples of README.md exactly as written,
// as a reader with a fresh clone would: the first block from the
// repository root (it installs ctxleak, here into a temporary GOBIN on
// PATH, builds the example program and makes a heap dump), the second twice
// in the directory the first made, so that running an example again works
// too.
func TestREADME(t *testing.T) {
	skipUnlessREADME(t)
	if testing.Short() {
		t.Skip("-short: the README test builds and installs ctxleak")
	}
	t.Parallel()
	tryIt, holders := readmeBlock(t, "try-it"), readmeBlock(t, "holders")
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp, gobin := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp, "GOBIN="+gobin,
		"PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	run := func(dir string, block []string) string {
		t.Helper()
		return runREADME(t, dir, env, block)
	}

	out := run(repo, tryIt)
	if !strings.Contains(out, "frame main.waitThenUse") {
		t.Errorf("the first example does not name the holder:\n%s", out)
	}
	dumps, _ := filepath.Glob(filepath.Join(tmp, "*", "app.heapdump"))
	if len(dumps) != 1 {
		t.Fatalf("the first example made %d dumps under TMPDIR, want 1: %q", len(dumps), dumps)
	}
	dir := filepath.Dir(dumps[0])
	for range 2 {
		out = run(dir, holders)
		if !strings.Contains(out, "frame main.waitThenUse") || strings.Count(out, "heap dump - (") != 1 {
			t.Errorf("the holders examples:\n%s", out)
		}
	}
}

// runREADME runs a README block in dir with env and returns its output.
func runREADME(t *testing.T, dir string, env, block []string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", readmeScript(block))
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("README block in %s: %v\n%s", dir, err, out.String())
	}
	return out.String()
}

// TestUseFromAnotherModule follows the README's "Use it from another
// module": a new module next to a checkout (../ctxleak) gets the module
// through a replace directive, another through a workspace, and both build
// and vet a program that imports retain. Only the module cache is used, as
// the checkout's own dependencies are there.
func TestUseFromAnotherModule(t *testing.T) {
	skipUnlessREADME(t)
	if testing.Short() {
		t.Skip("-short: builds two modules")
	}
	t.Parallel()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.Symlink(repo, filepath.Join(root, "ctxleak")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=", "TMPDIR="+t.TempDir())
	program := `package main

import "github.com/ctxleak/ctxleak/retain"

func main() {
	_ = retain.NewTracker
}
`
	for _, name := range []string{"replace", "work"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, "app-"+name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/app\n\ngo 1.25.0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644); err != nil {
				t.Fatal(err)
			}
			runREADME(t, dir, env, readmeBlock(t, name))
			// The workspace needs no go.mod requirement, nor -mod=mod.
			buildEnv := env
			if name == "work" {
				buildEnv = append(os.Environ(), "GOPROXY=off", "TMPDIR="+t.TempDir())
			}
			runREADME(t, dir, buildEnv, []string{"go vet ./...", "go build -o app ."})
		})
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
