package testbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeptBetweenBuilds builds a small module three times, as three test
// runs would: the second reuses the first's executable (the same file, not
// linked again); after a source change the third is linked afresh, and the
// first run's executable still runs the old program.
func TestKeptBetweenBuilds(t *testing.T) {
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	mod := t.TempDir()
	write := func(word string) {
		t.Helper()
		src := "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"" + word + "\") }\n"
		if err := os.WriteFile(filepath.Join(mod, "main.go"), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module prog\n\ngo 1.22\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(exe string) string {
		t.Helper()
		out, err := exec.Command(exe).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	build := func(run string) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), run)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		exe := filepath.Join(dir, "prog")
		if out, err := BuildIn(mod, exe, []string{"CGO_ENABLED=0"}, "."); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return exe
	}
	same := func(a, b string) bool {
		t.Helper()
		sa, err := os.Stat(a)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := os.Stat(b)
		if err != nil {
			t.Fatal(err)
		}
		return os.SameFile(sa, sb)
	}

	write("one")
	first := build("first")
	kept := keptPath(mod, first, []string{"CGO_ENABLED=0"}, []string{"."})
	if kept == "" || !same(first, kept) {
		t.Fatalf("the first build's executable is not kept at %q", kept)
	}
	second := build("second")
	if !same(second, first) {
		t.Errorf("the second build linked again instead of reusing the kept executable")
	}
	write("two")
	third := build("third")
	if same(third, first) {
		t.Fatalf("after a source change the kept executable was reused")
	}
	if got := run(third); got != "two" {
		t.Errorf("third build prints %q, want two", got)
	}
	if got := run(first); got != "one" {
		t.Errorf("first build prints %q after the rebuild, want one: the kept file was overwritten in place", got)
	}
	if !same(third, kept) {
		t.Errorf("the rebuilt executable was not kept")
	}
}
