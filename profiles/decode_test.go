package profiles

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
)

// checkDecodesAsPprof fails t unless decodeProto gives for raw what
// google/pprof's profile.ParseUncompressed gives: the same error, or
// profiles whose exported fields are deeply equal (nil and empty told
// apart), and which pass or fail CheckValid alike; with its own count of
// what raw repeats, and, when protoCost takes raw for a proto message,
// with protoCost's, which must then be the same; and costStream's walk
// agrees with protoCost (checkStreamCost).
func checkDecodesAsPprof(t testing.TB, raw []byte) {
	t.Helper()
	want, wantErr := parsePprof(raw)
	var n protoCounts
	_, isProto := protoCost(raw, 1<<62, &n)
	checkStreamCost(t, raw, 1<<62, rand.New(rand.NewPCG(uint64(len(raw)), 1)))
	for _, counts := range []*protoCounts{nil, &n} {
		if counts != nil && !isProto {
			continue
		}
		got, err := decodeProto(raw, counts)
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("decodeProto (counts %v): error %v, pprof's decoder: %v", counts, err, wantErr)
		}
		if err != nil {
			continue
		}
		if !equalExported(reflect.ValueOf(got), reflect.ValueOf(want)) {
			t.Fatalf("decodeProto's profile (counts %v) differs from pprof's:\n%s\npprof's:\n%s", counts, got, want)
		}
		if err, wantErr := got.CheckValid(), want.CheckValid(); fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("CheckValid: %v, of pprof's profile: %v", err, wantErr)
		}
		if counts != nil {
			var count protoDecoder
			if err := count.profile(raw); err != nil {
				t.Fatalf("decodeProto decoded what its count pass refuses: %v", err)
			}
			if count.n != *counts {
				t.Fatalf("protoCost counts %+v, decodeProto's count pass %+v", *counts, count.n)
			}
		}
	}
}

// equalExported is reflect.DeepEqual on exported struct fields only.
func equalExported(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalExported(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() && !equalExported(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalExported(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if v := b.MapIndex(k); !v.IsValid() || !equalExported(a.MapIndex(k), v) {
				return false
			}
		}
		return true
	}
	return a.Equal(b)
}

// parsePprof is profile.ParseUncompressed with its panics as errors.
func parsePprof(raw []byte) (p *profile.Profile, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return profile.ParseUncompressed(raw)
}

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

// Well-formed profiles, the runtime's and one that uses every field,
// decode as pprof decodes them.
func TestDecodeProtoAsPprof(t *testing.T) {
	inputs := realProfiles(t)
	inputs["crafted"] = craftedProfile(t)
	for name, raw := range inputs {
		t.Run(name, func(t *testing.T) { checkDecodesAsPprof(t, raw) })
	}
}

// Every prefix of a profile, and the profile with each byte changed,
// fails or decodes as with pprof: the same error, or the same profile.
func TestDecodeProtoMalformedAsPprof(t *testing.T) {
	raw := craftedProfile(t)
	for n := range raw {
		checkDecodesAsPprof(t, raw[:n])
	}
	for i := range raw {
		for _, b := range []byte{0x00, 0x01, 0x7f, 0x80, 0xff, raw[i] ^ 0x07} {
			c := bytes.Clone(raw)
			c[i] = b
			checkDecodesAsPprof(t, c)
		}
	}
}

// Crafted field sequences: the concatenation of two profiles, a first
// string that is not empty, indexes and ids out of range, unknown fields
// of every wire type, packed and unpacked repeated values, groups.
func TestDecodeProtoEdgesAsPprof(t *testing.T) {
	head := profileHead() // strings "", "a", "b"; sample type; function 1
	u := func(num, v uint64) []byte {
		return binary.AppendUvarint(binary.AppendUvarint(nil, num<<3), v)
	}
	cases := map[string][]byte{
		"two times":        append(append(bytes.Clone(head), u(9, 5)...), u(9, 6)...),
		"zero time twice":  append(append(bytes.Clone(head), u(9, 0)...), u(9, 6)...),
		"first string":     appendField(nil, 6, []byte("x")),
		"no strings":       appendField(nil, 1, nil),
		"string index":     append(bytes.Clone(head), u(14, 9)...),
		"negative index":   append(bytes.Clone(head), u(14, 1<<63)...),
		"fixed64 field":    append(bytes.Clone(head), 0x79, 1, 2, 3, 4, 5, 6, 7, 8), // field 15, wire 1
		"fixed32 field":    append(bytes.Clone(head), 0xad, 0x01, 1, 2, 3, 4),       // field 21, wire 5
		"group":            append(bytes.Clone(head), 0x1b),                         // field 3, wire 3
		"field zero":       append(bytes.Clone(head), 0x00, 0x05),
		"string as varint": append(bytes.Clone(head), u(6, 1)...),
		"varint as bytes":  appendField(bytes.Clone(head), 9, []byte{1}),
		"long varint":      append(bytes.Clone(head), 0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f),
		"longer varint":    append(bytes.Clone(head), 0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		"sample unpacked": appendField(append(bytes.Clone(head), appendField(nil, 4, u(1, 1))...), 2,
			append(append(append(u(1, 1), u(1, 1)...), u(2, 3)...), u(2, 4)...)),
		"sample missing location": appendField(bytes.Clone(head), 2, append(u(1, 7), u(2, 1)...)),
		"label kinds": appendField(bytes.Clone(head), 2, append(append(append(
			appendField(nil, 3, append(u(1, 1), u(2, 2)...)),
			appendField(nil, 3, append(u(1, 2), u(4, 1)...))...),
			appendField(nil, 3, u(1, 1))...),
			appendField(nil, 3, append(u(1, 2), u(3, 5)...))...)),
		"label bad key":      appendField(bytes.Clone(head), 2, appendField(nil, 3, u(1, 40))),
		"duplicate ids":      append(append(bytes.Clone(head), appendField(nil, 5, append(u(1, 1), u(2, 2)...))...), appendField(nil, 4, append(u(1, 1), appendField(nil, 4, u(1, 1))...))...),
		"mapping id zero":    append(append(bytes.Clone(head), appendField(nil, 3, u(5, 1))...), appendField(nil, 4, u(1, 3))...),
		"period twice":       append(appendField(bytes.Clone(head), 11, u(1, 1)), appendField(nil, 11, nil)...),
		"comments packed":    appendField(bytes.Clone(head), 13, []byte{1, 2, 0x80}),
		"comments unpacked":  append(append(bytes.Clone(head), u(13, 1)...), u(13, 2)...),
		"line bad function":  appendField(bytes.Clone(head), 4, append(u(1, 1), appendField(nil, 4, u(1, 1<<40))...)),
		"unknown in message": appendField(bytes.Clone(head), 5, append(u(1, 3), 0x79, 1, 2, 3, 4, 5, 6, 7, 8)),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) { checkDecodesAsPprof(t, raw) })
	}
}

// FuzzDecodeProto checks decodeProto against pprof's decoder on any
// input.
func FuzzDecodeProto(f *testing.F) {
	for _, raw := range realProfiles(f) {
		f.Add(raw)
	}
	f.Add(craftedProfile(f))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 1<<16 {
			return // pprof's decoder may take much memory for small inputs
		}
		checkDecodesAsPprof(t, raw)
	})
}
