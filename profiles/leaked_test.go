package profiles_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ctxleak/ctxleak/internal/leaktest"
	"github.com/ctxleak/ctxleak/internal/testbuild"
	"github.com/ctxleak/ctxleak/profiles"
)

// TestGoroutineLeakFixture reads the goroutineleak profiles
// testdata/leakprof wrote on Go 1.27.3 (1,500 goroutines blocked in
// ch <- v, 200 on a channel a global keeps): 1,500 leaked in one group,
// and the gate on them.
func TestGoroutineLeakFixture(t *testing.T) {
	for _, name := range []string{"goroutineleak.pb.gz", "goroutineleak.txt"} {
		t.Run(name, func(t *testing.T) {
			p, err := (&profiles.Loader{}).Load(t.Context(), filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			checkLeaked(t, p, name == "goroutineleak.pb.gz")
		})
	}
}

// TestGoroutineLeakLive runs testdata/leakprof, built with a Go that has
// the goroutineleak profile (this one, or go1.27.3 through GOTOOLCHAIN),
// and reads the profiles it writes.
func TestGoroutineLeakLive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a child program")
	}
	env, err := leaktest.BuildEnv()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "leakprof")
	if out, err := testbuild.Build(exe, env, "./testdata/leakprof"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	pb, txt := filepath.Join(dir, "leak.pb.gz"), filepath.Join(dir, "leak.txt")
	if out, err := exec.Command(exe, pb, txt).CombinedOutput(); err != nil {
		t.Fatalf("leakprof: %v\n%s", err, out)
	}
	for _, f := range []string{pb, txt} {
		p, err := (&profiles.Loader{}).Load(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		checkLeaked(t, p, f == pb)
	}
}

func checkLeaked(t *testing.T, p *profiles.Profile, proto bool) {
	t.Helper()
	if p.Kind != profiles.GoroutineLeak {
		t.Fatalf("kind %q, want %q", p.Kind, profiles.GoroutineLeak)
	}
	r, err := profiles.AnalyzeGoroutines([]*profiles.Profile{p}, profiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 1500 || len(r.Groups) != 1 {
		t.Fatalf("%d leaked in %d groups, want 1500 in 1: %+v", r.Total, len(r.Groups), r.Groups)
	}
	g := r.Groups[0]
	if g.Start.Function != "main.send" || g.Wait.Function != "main.send" || g.Wait.Line == 0 {
		t.Errorf("group started in %v, blocked in %v; want main.send", g.Start, g.Wait)
	}
	if want := map[bool]string{true: "chan send", false: ""}[proto]; g.BlockedOn != want {
		t.Errorf("blocked on %q, want %q", g.BlockedOn, want)
	}
	rep := &profiles.Report{Leaked: r}
	for _, tt := range []struct {
		limit   int64
		tripped bool
	}{{0, true}, {1499, true}, {1500, false}} {
		res, err := profiles.Gates{Leaked: &tt.limit}.CheckReport(rep)
		if err != nil || len(res) != 1 || res[0].Tripped != tt.tripped || res[0].Value != 1500 {
			t.Errorf("limit %d: %+v, %v; want tripped %v with 1500", tt.limit, res, err, tt.tripped)
		}
	}
	limit := int64(0)
	if _, err := (profiles.Gates{Leaked: &limit}).CheckReport(&profiles.Report{}); err == nil {
		t.Error("the leaked gate without a goroutineleak profile: no error")
	}
}
