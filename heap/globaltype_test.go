package heap

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// TestGlobalTypeWithoutDWARF types the path from a global whose type the
// executable does not give: `go test` and `go run` link without DWARF,
// where GlobalType knows no variable, and the program that wrote the dump
// gives the global's type descriptor with its address (Globals,
// Symbol.Type). The path from main.guarded, a struct holding a map of
// contexts, must be the one DWARF gives, whatever the build.
func TestGlobalTypeWithoutDWARF(t *testing.T) {
	want := []Step{
		{Via: ".m", Type: "map[string]context.Context"},
		{Via: ".dirPtr", Type: "map[string]context.Context group"},
		{Via: ".slots[0].elem", Type: "context.valueCtx"},
	}
	for _, build := range []string{"", "stripped"} {
		t.Run("build="+build, func(t *testing.T) {
			// Each build writes its own dump: the stripped executable
			// lays out its type descriptors as it pleases.
			exe := holdersProg(t, build)
			dump := filepath.Join(t.TempDir(), "holders-guarded-cache.dump") // its own: go test -count=2 runs it again
			out, err := exec.Command(exe, "guarded-cache", dump).Output()
			if err != nil {
				t.Fatalf("holders guarded-cache: %v", err)
			}
			var r struct {
				// What testdata/holders prints of main.guarded.
				GlobalAddr uint64 `json:"global_addr"`
				GlobalSize uint64 `json:"global_size"`
				GlobalType uint64 `json:"global_type"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("holders printed %q: %v", out, err)
			}
			if r.GlobalType == 0 {
				t.Fatalf("holders printed no type for main.guarded: %s", out)
			}
			bin := openShared(t, exe)
			sym := binsym.Symbol{Name: "main.guarded", Addr: r.GlobalAddr, Size: r.GlobalSize, Type: r.GlobalType}
			path := guardedPath(t, dump, bin, sym)
			if len(path) < len(want) {
				t.Fatalf("path %+v, want it to start with %+v", path, want)
			}
			for i, w := range want {
				if s := path[i]; s.Via != w.Via || s.Type != w.Type {
					t.Errorf("step %d: via %q type %q, want via %q type %q", i, s.Via, s.Type, w.Via, w.Type)
				}
			}
			if build != "stripped" {
				return
			}
			// A type whose size is not the variable's is not used: the
			// program's report may be wrong.
			sym.Size += 8
			if s := guardedPath(t, dump, bin, sym)[0]; s.Via != "+8" || s.Type != "" {
				t.Errorf("with a misfit type, first step via %q type %q, want +8, untyped", s.Via, s.Type)
			}
		})
	}
}

// guardedPath analyses dump, naming main.guarded by sym, and returns the
// path from main.guarded to the payload.
func guardedPath(t *testing.T, dump string, bin *binsym.Binary, sym binsym.Symbol) []Step {
	t.Helper()
	a, err := Analyze(dump, bin, Globals(sym))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	g := payloadGroup(t, a)
	if g.Root.Global != "main.guarded" || len(g.Path) == 0 {
		t.Fatalf("holder %+v, path %+v: want global main.guarded", g.Root, g.Path)
	}
	return g.Path
}
