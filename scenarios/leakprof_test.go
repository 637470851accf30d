package scenarios

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"
)

// TestLeakedGroups reads a goroutineleak profile written by the pprof
// library and groups its goroutines by the first frame outside the
// runtime and package sync, the largest group first.
func TestLeakedGroups(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: name, Filename: "/src/" + name + ".go"}
	}
	park, send, lock := fn(1, "runtime.gopark"), fn(2, "runtime.chansend1"), fn(3, "sync.(*Mutex).Lock")
	sender, worker := fn(4, "github.com/ctxleak/ctxleak/scenarios.sender"), fn(5, "main.worker")
	loc := func(id uint64, f *profile.Function, line int64) *profile.Location {
		return &profile.Location{ID: id, Address: id * 16, Line: []profile.Line{{Function: f, Line: line}}}
	}
	locs := []*profile.Location{loc(1, park, 10), loc(2, send, 20), loc(3, lock, 30), loc(4, sender, 606), loc(5, worker, 7)}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "goroutineleak", Unit: "count"},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{locs[0], locs[1], locs[3]}, Value: []int64{3}},
			{Location: []*profile.Location{locs[0], locs[2], locs[4]}, Value: []int64{5}},
			{Location: []*profile.Location{locs[0], locs[1], locs[3]}, Value: []int64{4}},
		},
		Location: locs,
		Function: []*profile.Function{park, send, lock, sender, worker},
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	groups, err := leakedGroups(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got := leakedText(groups)
	want := "7 goroutines proven leaked in scenarios.sender (ctxleak/scenarios.sender.go:606); 5 goroutines proven leaked in main.worker (src/main.worker.go:7)"
	if got != want {
		t.Errorf("leakedText = %q\nwant          %q", got, want)
	}
	if groups[0].BlockedIn.Function != sender.Name {
		t.Errorf("first group blocked in %q, want the full name %q", groups[0].BlockedIn.Function, sender.Name)
	}
	if got := leakedText(nil); got != "none" {
		t.Errorf("leakedText(nil) = %q, want none", got)
	}
	if _, err := leakedGroups([]byte("not a profile")); err == nil {
		t.Error("leakedGroups of garbage: no error")
	}
}
