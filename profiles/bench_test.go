package profiles_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/profiles"
	"github.com/google/pprof/profile"
)

// The large-profile benchmarks run only with CTXLEAK_LONG=1, the switch of
// ctxleak's long tests, on a generated gzipped heap profile of 50 MB:
//
//	CTXLEAK_LONG=1 go test -run '^$' -bench Large -benchtime 5x ./profiles/
//
// The generated profile is kept in the temporary directory for later runs.
// Run each benchmark in a process of its own (-bench 'LargeParse$', then
// -bench 'LargeAnalyze$') to keep the heap left by one from pacing the
// garbage collector of the next.
//
// BenchmarkLargeParse is profile.Parse alone; BenchmarkLargeAnalyze reads
// the same bytes the way ctxleak analyze does (profiles.Parse, then
// AnalyzeHeap): the target is at most 1.5 times the first.
const largeMB = 50

var (
	largeOnce    sync.Once
	largeProfile []byte
)

func largeHeapProfile(b *testing.B) []byte {
	if os.Getenv("CTXLEAK_LONG") == "" {
		b.Skip("generates a 50 MB profile: set CTXLEAK_LONG=1 to run it")
	}
	mb := largeMB
	largeOnce.Do(func() {
		// Generating takes most of a minute: keep the profile in the
		// temporary directory for the next run.
		cache := filepath.Join(os.TempDir(), fmt.Sprintf("ctxleak-bench-heap-%dMB-v1.pb.gz", mb))
		if data, err := os.ReadFile(cache); err == nil {
			largeProfile = data
			return
		}
		largeProfile = generateHeapProfile(b, int64(mb)*1000*1000)
		_ = os.WriteFile(cache, largeProfile, 0o600)
	})
	b.SetBytes(int64(len(largeProfile)))
	return largeProfile
}

// generateHeapProfile builds a heap profile shaped like a large service's:
// thousands of functions, call stacks 8 to 48 frames deep that start in
// main or in net/http's connection loop and end in the runtime's
// allocator, some inlined frames, 4 values per sample of which about a
// third are freed (zero in use). It adds samples until the gzipped
// encoding reaches size bytes.
func generateHeapProfile(tb testing.TB, size int64) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            512 * 1024,
		Mapping:           []*profile.Mapping{{ID: 1, Start: 0x400000, Limit: 0x4000000, File: "/usr/bin/svc", HasFunctions: true}},
	}
	newFunc := func(name, file string) *profile.Function {
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: file}
		p.Function = append(p.Function, f)
		return f
	}
	newLoc := func(lines ...profile.Line) *profile.Location {
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: p.Mapping[0],
			Address: 0x400000 + uint64(len(p.Location))*0x20, Line: lines}
		p.Location = append(p.Location, l)
		return l
	}
	var allocLeaves [][]*profile.Location
	for _, stack := range [][]string{
		{"runtime.mallocgc", "runtime.newobject"},
		{"runtime.mallocgc", "runtime.makeslice"},
		{"runtime.mallocgc", "runtime.growslice"},
		{"runtime.mallocgc", "runtime.growslice", "bytes.growSlice", "bytes.(*Buffer).grow"},
		{"runtime.mallocgc", "runtime.makeslice", "io.ReadAll"},
		{"runtime.mallocgc", "runtime.rawstring", "runtime.concatstrings", "fmt.Sprintf"},
	} {
		var locs []*profile.Location
		for i, name := range stack {
			locs = append(locs, newLoc(profile.Line{Function: newFunc(name, "/usr/local/go/src/runtime/x.go"), Line: int64(100 + i)}))
		}
		allocLeaves = append(allocLeaves, locs)
	}
	var requestRoot, mainRoot []*profile.Location
	for i, name := range []string{"net/http.HandlerFunc.ServeHTTP", "net/http.(*ServeMux).ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"} {
		requestRoot = append(requestRoot, newLoc(profile.Line{Function: newFunc(name, "/usr/local/go/src/net/http/server.go"), Line: int64(2000 + i)}))
	}
	mainRoot = append(mainRoot, newLoc(profile.Line{Function: newFunc("main.main", "/src/svc/main.go"), Line: 20}),
		newLoc(profile.Line{Function: newFunc("runtime.main", "/usr/local/go/src/runtime/proc.go"), Line: 290}))

	const nFuncs, nLocs = 6000, 60000
	funcs := make([]*profile.Function, nFuncs)
	for i := range funcs {
		funcs[i] = newFunc(fmt.Sprintf("github.com/acme/svc/pkg%d.(*Type%d).Method%d", i%97, i%389, i), fmt.Sprintf("/src/svc/pkg%d/file%d.go", i%97, i%13))
	}
	locs := make([]*profile.Location, nLocs)
	for i := range locs {
		line := profile.Line{Function: funcs[rng.IntN(nFuncs)], Line: int64(10 + rng.IntN(500))}
		if rng.IntN(8) == 0 { // an inlined call
			inner := profile.Line{Function: funcs[rng.IntN(nFuncs)], Line: int64(10 + rng.IntN(500))}
			locs[i] = newLoc(inner, line)
		} else {
			locs[i] = newLoc(line)
		}
	}
	// Stacks share callers as real ones do: each sample extends one of a
	// set of call paths.
	paths := make([][]*profile.Location, 20000)
	for i := range paths {
		depth := 4 + rng.IntN(40)
		path := make([]*profile.Location, depth)
		for j := range path {
			path[j] = locs[rng.IntN(nLocs)]
		}
		paths[i] = path
	}

	var buf bytes.Buffer
	batch := 50000
	for {
		for range batch {
			s := &profile.Sample{}
			s.Location = append(s.Location, allocLeaves[rng.IntN(len(allocLeaves))]...)
			path := paths[rng.IntN(len(paths))]
			s.Location = append(s.Location, path[:1+rng.IntN(len(path))]...)
			if rng.IntN(3) > 0 {
				s.Location = append(s.Location, requestRoot...)
			} else {
				s.Location = append(s.Location, mainRoot...)
			}
			objects := int64(1 + rng.IntN(2000))
			bytes := objects * int64(8<<rng.IntN(10))
			s.Value = []int64{objects, bytes, 0, 0}
			if rng.IntN(3) > 0 {
				in := 1 + rng.Int64N(objects)
				s.Value[2], s.Value[3] = in, in*(bytes/objects)
			}
			p.Sample = append(p.Sample, s)
		}
		buf.Reset()
		if err := p.Write(&buf); err != nil {
			tb.Fatal(err)
		}
		if int64(buf.Len()) >= size {
			break
		}
		// Aim for the size from the bytes per sample so far.
		perSample := float64(buf.Len()) / float64(len(p.Sample))
		batch = max(1000, int(float64(size-int64(buf.Len()))/perSample)+1000)
	}
	tb.Logf("generated a heap profile of %d samples, %d locations: %.1f MB gzipped", len(p.Sample), len(p.Location), float64(buf.Len())/1e6)
	return bytes.Clone(buf.Bytes())
}

// reportCPU adds the CPU time per operation (user and system, all
// threads, the garbage collector's included) to a benchmark's results:
// unlike wall time, it does not grow when other processes share the
// machine.
func reportCPU(b *testing.B, start time.Duration) {
	if used := cpuTime() - start; used > 0 {
		b.ReportMetric(used.Seconds()/float64(b.N), "cpu-s/op")
	}
}

func BenchmarkLargeParse(b *testing.B) {
	data := largeHeapProfile(b)
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		if _, err := profile.Parse(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLargeAnalyze(b *testing.B) {
	data := largeHeapProfile(b)
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		p, err := profiles.Parse("large.pb.gz", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLargeAnalyzeOnly is the analysis without the parse.
func BenchmarkLargeAnalyzeOnly(b *testing.B) {
	data := largeHeapProfile(b)
	p, err := profiles.Parse("large.pb.gz", data)
	if err != nil {
		b.Fatal(err)
	}
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		if _, err := profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

var (
	smallOnce    sync.Once
	smallProfile []byte
)

// smallHeapProfile is a generated gzipped heap profile of 2 MB, shaped as
// the large one: the benchmarks below run without CTXLEAK_LONG.
func smallHeapProfile(b *testing.B) []byte {
	smallOnce.Do(func() { smallProfile = generateHeapProfile(b, 2*1000*1000) })
	b.SetBytes(int64(len(smallProfile)))
	return smallProfile
}

// BenchmarkAnalyze reads a 2 MB profile the way ctxleak analyze does:
// profiles.Parse, then AnalyzeHeap.
func BenchmarkAnalyze(b *testing.B) {
	data := smallHeapProfile(b)
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		p, err := profiles.Parse("small.pb.gz", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReport renders the report of a 2 MB profile as text and as
// JSON, top 10 sites.
func BenchmarkReport(b *testing.B) {
	p, err := profiles.Parse("small.pb.gz", smallHeapProfile(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(0) // the rendering's cost does not follow the profile's size
	r := &profiles.Report{Inputs: []profiles.Input{profiles.NewInput(p, profiles.RoleProfile)}, Settings: profiles.Settings{Top: 10}}
	if r.Heap, err = profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := r.WriteText(io.Discard, false); err != nil {
			b.Fatal(err)
		}
		if err := r.WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
