package scenarios

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
)

func TestHolderText(t *testing.T) {
	site := &binsym.Position{Function: "github.com/ctxleak/ctxleak/scenarios.timeoutJob", File: "/src/scenarios/catalogue.go", Line: 427}
	for _, tt := range []struct {
		name  string
		roots []HolderRoot
		want  string
	}{
		{"frame", []HolderRoot{{Count: 1, Kind: heapdump.RootFrame, Goroutines: []uint64{18},
			Position: &binsym.Position{Function: "github.com/ctxleak/ctxleak/scenarios.sender", File: "/src/scenarios/catalogue.go", Line: 488}}},
			"goroutine 18 frame scenarios.sender (scenarios/catalogue.go:488)"},
		{"frames", []HolderRoot{{Count: 10, Kind: heapdump.RootFrame, Goroutines: []uint64{5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
			Position: &binsym.Position{Function: "github.com/ctxleak/ctxleak/scenarios.task", File: "/src/scenarios/catalogue.go", Line: 307}}},
			"10 x goroutine frame scenarios.task (scenarios/catalogue.go:307)"},
		{"frame without a position", []HolderRoot{{Count: 1, Kind: heapdump.RootFrame, Goroutines: []uint64{1}, Position: &binsym.Position{Function: "main.main"}}},
			"goroutine 1 frame main.main"},
		{"global", []HolderRoot{{Count: 1, Kind: heapdump.RootGlobal, Global: "github.com/ctxleak/ctxleak/scenarios.cache"}},
			"global scenarios.cache"},
		{"unnamed globals are left out", []HolderRoot{
			{Count: 1, Kind: heapdump.RootFrame, Goroutines: []uint64{1}, Position: &binsym.Position{Function: "main.main", File: "/src/main.go", Line: 9}},
			{Count: 1, Kind: heapdump.RootGlobal, Global: "0x10024a0"}},
			"goroutine 1 frame main.main (src/main.go:9)"},
		{"unless alone", []HolderRoot{{Count: 1, Kind: heapdump.RootGlobal, Global: "0x10024a0"}}, "global 0x10024a0"},
		{"timer", []HolderRoot{{Count: 1, Kind: heapdump.RootTimer, Position: &binsym.Position{Function: "context.WithDeadlineCause.func2"}, Creator: site}},
			"timer context.WithDeadlineCause.func2, created at scenarios.timeoutJob (scenarios/catalogue.go:427)"},
		{"labels", []HolderRoot{
			{Count: 1, Kind: heapdump.RootFrame, Goroutines: []uint64{1}, Position: &binsym.Position{Function: "github.com/ctxleak/ctxleak/scenarios.pprofLabelValue.func1", File: "/src/scenarios/catalogue.go", Line: 595}},
			{Count: 10, Kind: heapdump.RootGoroutine, Goroutines: []uint64{5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, Detail: "pprof labels"}},
			"goroutine 1 frame scenarios.pprofLabelValue.func1 (scenarios/catalogue.go:595) + 10 x goroutine (pprof labels)"},
		{"one goroutine's labels", []HolderRoot{{Count: 1, Kind: heapdump.RootGoroutine, Goroutines: []uint64{9}, Detail: "pprof labels"}},
			"goroutine 9 (pprof labels)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := HolderDetail{Roots: tt.roots}
			if got := d.text(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestShortFunc(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/ctxleak/ctxleak/scenarios.task":            "scenarios.task",
		"net/http.(*conn).serve":                               "http.(*conn).serve",
		"context.WithDeadlineCause.func2":                      "context.WithDeadlineCause.func2",
		"main.main":                                            "main.main",
		"example.com/m.F[go.shape.struct { example.com/m.x }]": "m.F[go.shape.struct { example.com/m.x }]",
		"": "",
	} {
		if got := ShortFunc(in); got != want {
			t.Errorf("ShortFunc(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPathText(t *testing.T) {
	d := HolderDetail{Path: []PathStep{
		{Via: "local", Type: "closure github.com/ctxleak/ctxleak/scenarios.f.func1"},
		{Via: "+8"}, {Via: "+16"},
		{Via: ".Context", Type: "context.valueCtx"},
		{Via: ".val", Type: "[]uint8"}, {Type: "[]uint8"},
	}}
	if got, want := d.PathText(), "closure scenarios.f.func1 > ? > context.valueCtx > []uint8"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// grouping is what checkGrouping expects of the holders of the
// multi-payload scenario and of a payload several goroutines share.
var grouping = map[string]struct {
	payloads int // per holder detail; 0 for one per task
	shared   bool
}{
	"http-server":       {0, false},
	"request-ctx-tasks": {1, true},
}

// checkGrouping checks the holders of res in structure (TestCatalogueInChildren
// calls it): http-server's payloads are each held by one goroutine,
// grouped; request-ctx-tasks's one payload is shared by its tasks.
func checkGrouping(t *testing.T, r *Runner, res Result, want struct {
	payloads int
	shared   bool
}) {
	t.Helper()
	tasks := r.Options.Tasks
	if want.payloads == 0 {
		want.payloads = tasks
	}
	var p PhaseResult
	for _, ph := range res.Phases {
		if ph.Name == "responses-received" || ph.Name == "request-returned" {
			p = ph
		}
	}
	if len(p.HolderDetail) != 1 {
		t.Fatalf("%s: %d holder details, want 1: %+v", p.Name, len(p.HolderDetail), p.HolderDetail)
	}
	d := p.HolderDetail[0]
	if d.Payloads != want.payloads || d.Shared != want.shared || len(d.Roots) != 1 {
		t.Fatalf("%s: %d payloads, shared %v, %d roots; want %d, %v, 1", p.Name, d.Payloads, d.Shared, len(d.Roots), want.payloads, want.shared)
	}
	root := d.Roots[0]
	ids := slices.Clone(root.Goroutines)
	slices.Sort(ids)
	if root.Count != tasks || root.Kind != heapdump.RootFrame || len(slices.Compact(ids)) != tasks ||
		root.Position == nil || root.Position.Function != "github.com/ctxleak/ctxleak/scenarios.task" || root.CreatedBy == nil {
		t.Errorf("root %+v; want %d frames of scenarios.task in as many goroutines", root, tasks)
	}
	if d.RetainedBytes < uint64(r.Options.PayloadBytes) {
		t.Errorf("retained %d bytes, want at least the payload, %d", d.RetainedBytes, r.Options.PayloadBytes)
	}
	// The boxed slice (its header, then its array) is one step, with the
	// size of one payload: the payload split among them.
	if want := "context.valueCtx > []uint8 of " + bytesize.Format(int64(r.Options.PayloadBytes)/int64(d.Payloads)); d.PathText() != want {
		t.Errorf("path %s, want %s", d.PathText(), want)
	}
}

// TestDumpsKeptOrRemoved: the child writes its heap dumps 0600, one per
// alive phase; they stay when kept, and are removed once read otherwise.
func TestDumpsKeptOrRemoved(t *testing.T) {
	t.Parallel()
	r := holdersRunner(t, time.Minute)
	r.Holders.Keep = true
	s, _ := Lookup("global-cache")
	res := r.Run(context.Background(), s)
	if res.Verdict != AsExpected {
		t.Fatalf("verdict %q: %s", res.Verdict, res.Error)
	}
	dir := filepath.Join(r.Options.DumpDir, s.Name)
	var dumps []string
	for _, p := range res.Phases {
		if p.Alive != (p.Dump != "") {
			t.Errorf("%s: alive %v, dump %q", p.Name, p.Alive, p.Dump)
		}
		if p.Dump != "" {
			dumps = append(dumps, p.Dump)
			if filepath.Dir(p.Dump) != dir {
				t.Errorf("%s: dump %s not in %s", p.Name, p.Dump, dir)
			}
		}
	}
	want := []string{filepath.Join(dir, "01-request-running.heapdump"), filepath.Join(dir, "02-request-returned.heapdump")}
	if !slices.Equal(dumps, want) {
		t.Errorf("dumps %v, want %v", dumps, want)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if perm := info.Mode().Perm(); d.IsDir() && perm != 0o700 || !d.IsDir() && perm != 0o600 {
			t.Errorf("%s has mode %v", path, perm)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Read again, not kept this time: the holders are the same, and the
	// dumps are gone.
	again := res
	again.Phases = slices.Clone(res.Phases)
	x := &Explainer{Binary: r.Holders.Binary}
	x.Explain(&again)
	for i, p := range again.Phases {
		if p.Holder != res.Phases[i].Holder || p.Dump != "" {
			t.Errorf("%s: held by %q, dump %q; want %q and no dump", p.Name, p.Holder, p.Dump, res.Phases[i].Holder)
		}
	}
	for _, d := range dumps {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want it removed", d, err)
		}
	}
}
