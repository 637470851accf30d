package heap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A dump of a program without plugins: the runtime's module list, read
// from the dump, has the executable only, and the report warns of nothing.
func TestNoPluginWarning(t *testing.T) {
	t.Parallel()
	a := runPile(t, "stackobj-clean", 40).analyze(t)
	if n := a.moduleCount(); n != 1 {
		t.Errorf("%d modules, want 1 (the executable)", n)
	}
	for _, u := range a.Unknown {
		if u.Reason == PluginGlobals {
			t.Errorf("warning without plugins: %s", u.Text)
		}
	}
}

// A program that loaded a plugin whose global holds 2 MiB: the dump has
// no plugin globals, so the buffer looks dead, and the report says why.
// Building a plugin needs cgo and takes several seconds: CTXLEAK_LONG=1.
func TestPluginWarning(t *testing.T) {
	if os.Getenv("CTXLEAK_LONG") == "" {
		t.Skip("building a plugin takes several seconds: set CTXLEAK_LONG=1")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("building a plugin needs cgo, and there is no gcc")
	}
	t.Parallel()
	dir := t.TempDir()
	so, exe, dump := filepath.Join(dir, "payload.so"), filepath.Join(dir, "plugin"), filepath.Join(dir, "plugin.dump")
	for _, args := range [][]string{
		{"build", "-buildmode=plugin", "-o", so, "./testdata/plugin/payload"},
		{"build", "-o", exe, "./testdata/plugin"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, err := exec.Command(exe, so, dump).Output()
	if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	addr, err := strconv.ParseUint(strings.TrimSpace(string(out)), 0, 64)
	if err != nil {
		t.Fatalf("%s printed %q", exe, out)
	}
	a, err := Analyze(dump, openShared(t, exe))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if n := a.moduleCount(); n != 2 {
		t.Errorf("%d modules, want 2 (the executable and the plugin)", n)
	}
	if v, ok := a.Graph().Find(addr); !ok || a.Graph().Live(v) {
		t.Errorf("the plugin's buffer at %#x: found %v, live; want a dead object (plugin globals are not in the dump)", addr, ok)
	}
	rep, err := a.Holders()
	if err != nil {
		t.Fatal(err)
	}
	text := reportText(t, rep)
	if want := "  warning   the program loaded 1 Go module besides the executable (plugins)"; !strings.Contains(text, want) {
		t.Errorf("no %q in\n%s", want, text)
	}
	if want := "the globals of plugins are not roots in the dump, so what only they hold is counted as dead"; !strings.Contains(text, want) {
		t.Errorf("no %q in\n%s", want, text)
	}
}
