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

// readmeBlocks returns the ```sh blocks of README.md that a
// "<!-- runnable: ... -->" line marks, in order, each as its lines.
func readmeBlocks(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	lines := strings.Split(string(data), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "<!-- runnable") || lines[i+1] != "```sh" {
			continue
		}
		var block []string
		for i += 2; i < len(lines) && lines[i] != "```"; i++ {
			block = append(block, lines[i])
		}
		blocks = append(blocks, block)
	}
	return blocks
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
	if testing.Short() {
		t.Skip("-short: the README test builds and installs ctxleak")
	}
	t.Parallel()
	blocks := readmeBlocks(t)
	if len(blocks) != 2 {
		t.Fatalf("README.md has %d runnable blocks, want 2", len(blocks))
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp, gobin := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp, "GOBIN="+gobin,
		"PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	run := func(dir string, block []string) string {
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

	out := run(repo, blocks[0])
	if !strings.Contains(out, "frame main.waitThenUse") {
		t.Errorf("the first example does not name the holder:\n%s", out)
	}
	dumps, _ := filepath.Glob(filepath.Join(tmp, "*", "app.heapdump"))
	if len(dumps) != 1 {
		t.Fatalf("the first example made %d dumps under TMPDIR, want 1: %q", len(dumps), dumps)
	}
	dir := filepath.Dir(dumps[0])
	for range 2 {
		out = run(dir, blocks[1])
		if !strings.Contains(out, "frame main.waitThenUse") || strings.Count(out, "heap dump - (") != 1 {
			t.Errorf("the holders examples:\n%s", out)
		}
	}
}
