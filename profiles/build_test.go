package profiles_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/profiles"
	"github.com/google/pprof/profile"
)

// builder makes small profiles in memory, shaped as the Go runtime writes
// them, for tests that need exact control of the stacks.
type builder struct {
	p     *profile.Profile
	funcs map[string]*profile.Function
	locs  map[string]*profile.Location
}

func newHeapBuilder() *builder {
	return newBuilder(&profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            512 * 1024,
		TimeNanos:         1_700_000_000_000_000_000,
	})
}

func newGoroutineBuilder() *builder {
	return newBuilder(&profile.Profile{
		SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "goroutine", Unit: "count"},
		Period:     1,
		TimeNanos:  1_700_000_000_000_000_000,
	})
}

func newBuilder(p *profile.Profile) *builder {
	p.Mapping = []*profile.Mapping{{ID: 1, Start: 0x400000, Limit: 0x800000, File: "/bin/server", HasFunctions: true}}
	return &builder{p: p, funcs: map[string]*profile.Function{}, locs: map[string]*profile.Location{}}
}

// location returns the location for a frame written "pkg.Func file.go:12";
// several frames joined by " < " are one location with inlined calls,
// innermost first.
func (b *builder) location(frames string) *profile.Location {
	if l := b.locs[frames]; l != nil {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Mapping: b.p.Mapping[0], Address: 0x400000 + uint64(len(b.p.Location))*16}
	for f := range strings.SplitSeq(frames, " < ") {
		name, fileLine, _ := strings.Cut(f, " ")
		file, line, _ := strings.Cut(fileLine, ":")
		n, _ := strconv.ParseInt(line, 10, 64)
		fn := b.funcs[name]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: "/src/" + file}
			b.funcs[name] = fn
			b.p.Function = append(b.p.Function, fn)
		}
		l.Line = append(l.Line, profile.Line{Function: fn, Line: n})
	}
	b.locs[frames] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

// heap adds a heap sample: objects and bytes in use (and as many
// allocated), with a stack given leaf first.
func (b *builder) heap(objects, bytes int64, stack ...string) *builder {
	s := &profile.Sample{Value: []int64{objects, bytes, objects, bytes}}
	for _, f := range stack {
		s.Location = append(s.Location, b.location(f))
	}
	b.p.Sample = append(b.p.Sample, s)
	return b
}

// goroutines adds a goroutine sample with labels given as "k=v" pairs
// before the stack's frames.
func (b *builder) goroutines(n int64, labelsAndStack ...string) *builder {
	s := &profile.Sample{Value: []int64{n}}
	for _, x := range labelsAndStack {
		if k, v, ok := strings.Cut(x, "="); ok && !strings.Contains(x, " ") {
			if s.Label == nil {
				s.Label = map[string][]string{}
			}
			s.Label[k] = append(s.Label[k], v)
			continue
		}
		s.Location = append(s.Location, b.location(x))
	}
	b.p.Sample = append(b.p.Sample, s)
	return b
}

// encode writes the profile gzipped, as the runtime does.
func (b *builder) encode(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := b.p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// profile encodes and parses the profile, as a file would be read.
func (b *builder) profile(t testing.TB, source string) *profiles.Profile {
	t.Helper()
	p, err := profiles.Parse(source, b.encode(t))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
