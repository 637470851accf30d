package heap

import (
	"os"
	"testing"
)

// OnProgress reports the bytes read up to the dump's size, then the later
// phases in order, and changes nothing in the analysis.
func TestAnalyzeProgress(t *testing.T) {
	r := runPattern(t, "goroutine")
	fi, err := os.Stat(r.dump)
	if err != nil {
		t.Fatal(err)
	}
	var got []Progress
	a, err := Analyze(r.dump, nil, OnProgress(func(p Progress) { got = append(got, p) }))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var phases []string
	var last int64 = -1
	for _, p := range got {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
		if p.Phase == PhaseRead {
			if p.Total != fi.Size() || p.Done < last || p.Done > p.Total {
				t.Errorf("read %d of %d after %d; want up to the size, %d", p.Done, p.Total, last, fi.Size())
			}
			last = p.Done
		}
	}
	if want := []string{PhaseRead, PhaseGraph, PhaseDominators}; len(phases) != 3 || phases[0] != want[0] || phases[1] != want[1] || phases[2] != want[2] {
		t.Errorf("phases %q, want %q", phases, want)
	}
	if last != fi.Size() {
		t.Errorf("last read report at %d bytes, want the whole dump, %d", last, fi.Size())
	}
	if len(got) > 110 {
		t.Errorf("%d reports: want about one per 1%% read", len(got))
	}
	plain := r.analyze(t, "none")
	if a.stats != plain.stats {
		t.Errorf("stats with progress %+v, without %+v", a.stats, plain.stats)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
