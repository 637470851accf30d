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
)

func TestHolderText(t *testing.T) {
	site := &binsym.Position{Function: "github.com/ctxleak/ctxleak/scenarios.timeoutJob", File: "/src/scenarios/catalogue.go", Line: 427}
	for _, tt := range []struct {
		name  string
		roots []HolderRoot
		want  string
	}{
		{"frame", []HolderRoot{{Count: 1, Kind: heapdump.RootFrame, Goroutines: []uint64{18},
			Function: "github.com/ctxleak/ctxleak/scenarios.sender", Location: "/src/scenarios/catalogue.go:488"}},
			"goroutine 18 frame scenarios.sender (catalogue.go:488)"},
		{"frames", []HolderRoot{{Count: 10, Kind: heapdump.RootFrame, Goroutines: []uint64{5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
			Function: "github.com/ctxleak/ctxleak/scenarios.task", Location: "/src/scenarios/catalogue.go:307"}},
			"10 x goroutine frame scenarios.task (catalogue.go:307)"},
		{"frame without a position", []HolderRoot{{Count: 1, Kind: heapdump.RootFrame, Goroutines: []uint64{1}, Function: "main.main"}},
			"goroutine 1 frame main.main"},
		{"global", []HolderRoot{{Count: 1, Kind: heapdump.RootGlobal, Global: "github.com/ctxleak/ctxleak/scenarios.cache"}},
			"global scenarios.cache"},
		{"unnamed globals are left out", []HolderRoot{
			{Count: 1, Kind: heapdump.RootFrame, Goroutines: []uint64{1}, Function: "main.main", Location: "/src/main.go:9"},
			{Count: 1, Kind: heapdump.RootGlobal, Global: "0x10024a0"}},
			"goroutine 1 frame main.main (main.go:9)"},
		{"unless alone", []HolderRoot{{Count: 1, Kind: heapdump.RootGlobal, Global: "0x10024a0"}}, "global 0x10024a0"},
		{"timer", []HolderRoot{{Count: 1, Kind: heapdump.RootTimer, Function: "context.WithDeadlineCause.func2", Creator: site}},
			"timer context.WithDeadlineCause.func2, created at scenarios.timeoutJob (catalogue.go:427)"},
		{"labels", []HolderRoot{
			{Count: 1, Kind: heapdump.RootFrame, Goroutines: []uint64{1}, Function: "github.com/ctxleak/ctxleak/scenarios.pprofLabelValue.func1", Location: "/src/scenarios/catalogue.go:595"},
			{Count: 10, Kind: heapdump.RootGoroutine, Goroutines: []uint64{5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, Detail: "pprof labels"}},
			"goroutine 1 frame scenarios.pprofLabelValue.func1 (catalogue.go:595) + 10 x goroutine (pprof labels)"},
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
	if got, want := d.PathText(), "closure scenarios.f.func1 > ? > context.valueCtx > []uint8 > []uint8"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestHolderGrouping checks the holders of the multi-payload scenario and
// of a payload several goroutines share, in structure: http-server's
// payloads are each held by one goroutine, grouped; request-ctx-tasks's
// one payload is shared by its tasks.
func TestHolderGrouping(t *testing.T) {
	r := holdersRunner(t, time.Minute)
	tasks := r.Options.Tasks
	for name, want := range map[string]struct {
		payloads int
		shared   bool
	}{
		"http-server":       {tasks, false},
		"request-ctx-tasks": {1, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, _ := Lookup(name, false)
			res := r.Run(context.Background(), s)
			if res.Verdict != AsExpected {
				t.Fatalf("verdict %q: %s", res.Verdict, res.Error)
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
				root.Function != "github.com/ctxleak/ctxleak/scenarios.task" || root.CreatedBy == nil {
				t.Errorf("root %+v; want %d frames of scenarios.task in as many goroutines", root, tasks)
			}
			if d.RetainedBytes < uint64(r.Options.PayloadBytes) {
				t.Errorf("retained %d bytes, want at least the payload, %d", d.RetainedBytes, r.Options.PayloadBytes)
			}
			if d.PathText() != "context.valueCtx > []uint8 > []uint8" {
				t.Errorf("path %s", d.PathText())
			}
		})
	}
}

// TestDumpsKeptOrRemoved: the child writes its heap dumps 0600, one per
// alive phase; they stay when kept, and are removed once read otherwise.
func TestDumpsKeptOrRemoved(t *testing.T) {
	r := holdersRunner(t, time.Minute)
	r.Holders.Keep = true
	s, _ := Lookup("global-cache", false)
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

// TestWrongHolder: a payload alive as expected but held by another holder
// than the expected one is not as expected, and the error names both.
func TestWrongHolder(t *testing.T) {
	s, _ := Lookup("test-wrong-holder", true)
	res := holdersRunner(t, time.Minute).Run(context.Background(), s)
	want := `request-returned: held by global scenarios.kept, want a holder matching ^goroutine \d+ frame scenarios\.nowhere \([a-z]+\.go:\d+\)$`
	if res.Verdict != NotAsExpected || res.Error != want {
		t.Errorf("verdict %q, error %q; want %q", res.Verdict, res.Error, want)
	}
	if p := res.Phases[0]; p.AsExpected || !p.Alive || p.ExpectHolder == "" {
		t.Errorf("phase %+v", p)
	}
}

// TestRunAll: results come back in order, judged, with their holders, and
// a cancelled run stops starting children.
func TestRunAll(t *testing.T) {
	r := holdersRunner(t, time.Minute)
	var list []*Scenario
	for _, name := range []string{"global-cache", "dead-ctx-leaked-goroutine", "blocked-sender"} {
		s, _ := Lookup(name, false)
		list = append(list, s)
	}
	var got []string
	err := r.RunAll(context.Background(), list, func(res Result) {
		got = append(got, res.Name+" "+res.Verdict)
		if res.Phases[0].Holder == "" {
			t.Errorf("%s: no holder at %s", res.Name, res.Phases[0].Name)
		}
	})
	want := []string{"global-cache as expected", "dead-ctx-leaked-goroutine as expected", "blocked-sender as expected"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("RunAll: %v, results %q; want %q", err, got, want)
	}

	// Cancelled when the first result comes back: the second child, which
	// may have started by then, is stopped and reported; no third starts.
	ctx, cancel := context.WithCancel(context.Background())
	got = nil
	err = r.RunAll(ctx, list, func(res Result) {
		got = append(got, res.Name+" "+res.Verdict)
		cancel()
	})
	stopped := []string{"global-cache as expected", "dead-ctx-leaked-goroutine error"}
	if err != context.Canceled || !slices.Equal(got, stopped[:1]) && !slices.Equal(got, stopped) {
		t.Errorf("cancelled RunAll: %v, results %q; want context.Canceled after %q", err, got, stopped)
	}
}
