package profiles

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
)

// realProfiles returns profiles the runtime writes, uncompressed: a heap
// profile and a goroutine profile with labels.
func realProfiles(t testing.TB) map[string][]byte {
	t.Helper()
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 3 {
		labels := pprof.Labels("request_id", fmt.Sprint(i), "route", "/a")
		wg.Go(func() {
			pprof.Do(context.Background(), labels, func(context.Context) { <-release })
		})
	}
	defer func() { close(release); wg.Wait() }()
	runtime.GC()
	out := map[string][]byte{}
	for _, name := range []string{"heap", "goroutine", "allocs"} {
		var b bytes.Buffer
		if err := pprof.Lookup(name).WriteTo(&b, 0); err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(&b)
		if err != nil {
			t.Fatal(err)
		}
		var raw bytes.Buffer
		if err := p.WriteUncompressed(&raw); err != nil {
			t.Fatal(err)
		}
		out[name] = raw.Bytes()
	}
	return out
}

// craftedProfile is a profile that uses every field the format has:
// numeric labels with and without units, several values for a key,
// mappings with a kernel prefix, ids past the number of elements and an
// id two elements share, comments, frames to drop and keep.
func craftedProfile(t testing.TB) []byte {
	t.Helper()
	m1 := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x2000, Offset: 8, File: "/bin/app", BuildID: "abc", HasFunctions: true, HasInlineFrames: true}
	m2 := &profile.Mapping{ID: 90, File: "[kernel.kallsyms]_text", HasLineNumbers: true, HasFilenames: true}
	f1 := &profile.Function{ID: 1, Name: "main.f", SystemName: "main.f", Filename: "f.go", StartLine: 3}
	f2 := &profile.Function{ID: 77, Name: "main.g", Filename: "g.go"}
	l1 := &profile.Location{ID: 1, Mapping: m1, Address: 0x1010, Line: []profile.Line{{Function: f1, Line: 4, Column: 2}, {Function: f2, Line: 9}}}
	l2 := &profile.Location{ID: 500, Mapping: m2, IsFolded: true}
	l3 := &profile.Location{ID: 2, Line: []profile.Line{{Function: f2, Line: 1}}}
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_space", Unit: "bytes"}},
		DefaultSampleType: "inuse_space",
		Sample: []*profile.Sample{
			{Location: []*profile.Location{l1, l3}, Value: []int64{1, -2}, Label: map[string][]string{"a": {"x", "y"}, "b": {"z"}},
				NumLabel: map[string][]int64{"bytes": {1, 2, 3}, "n": {4}}, NumUnit: map[string][]string{"bytes": {"B", "", "KiB"}}},
			{Location: []*profile.Location{l2}, Value: []int64{0, 5}},
			{Value: []int64{7, 7}, NumLabel: map[string][]int64{"only": {9}}},
		},
		Mapping:       []*profile.Mapping{m1, m2},
		Location:      []*profile.Location{l1, l2, l3},
		Function:      []*profile.Function{f1, f2},
		Comments:      []string{"one", "two"},
		DropFrames:    "runtime\\..*",
		KeepFrames:    "main\\..*",
		TimeNanos:     1234,
		DurationNanos: 5678,
		PeriodType:    &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:        524288,
		DocURL:        "https://example.com/doc",
	}
	var b bytes.Buffer
	if err := p.WriteUncompressed(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzCostStream checks the decode-cost walk of a stream, which refuses
// profiles too large to decode as they are decompressed, against
// protoCost on any input.
func FuzzCostStream(f *testing.F) {
	for _, raw := range realProfiles(f) {
		f.Add(raw)
	}
	f.Add(craftedProfile(f))
	f.Fuzz(func(t *testing.T, raw []byte) {
		rng := rand.New(rand.NewPCG(uint64(len(raw)), 5))
		checkStreamCost(t, raw, 1<<62, rng)
		if cost, ok := protoCost(raw, 1<<62); ok && cost > 0 {
			checkStreamCost(t, raw, cost-1, rng)
		}
	})
}
