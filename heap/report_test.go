package heap

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/google/pprof/profile"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// sampleReport is a fixed report with one group of each kind of holder, so
// that the golden files pin the JSON schema and the text layout.
func sampleReport() *Report {
	upload := []Step{
		{Via: "argument", Type: "context.valueCtx", Addr: "0xc000010000", Size: 48, RetainedBytes: 52428896, Objects: 3},
		{Via: ".val", Type: "main.Upload", Addr: "0xc000010030", Size: 48, RetainedBytes: 52428848, Objects: 2},
		{Via: ".Body", Type: "[]uint8", Addr: "0xc000400000", Size: 52428800, RetainedBytes: 52428800, Objects: 1},
	}
	site := &binsym.Position{Function: "main.newPayload", File: "/src/app/upload.go", Line: 41}
	object := Object{Type: "[]uint8", Addr: "0xc000400000", Size: 52428800, AllocSite: site,
		AllocStack: []binsym.Position{{Function: "runtime.makeslice", File: "/go/src/runtime/slice.go", Line: 117}, *site}}
	return &Report{
		Dump: "app.heapdump", Binary: "./app", GoVersion: "go1.26.8",
		LiveBytes: 160 << 20, LiveObjects: 12345, DeadBytes: 8 << 10, DeadObjects: 99, Goroutines: 14,
		SharedBytes: 24 << 10, SharedObjects: 87, MinSize: DefaultMinSize,
		Unknown:     []Unknown{{Reason: BinaryIncomplete, Text: "no ELF symbol table (linked with -s): names of globals, itabs and other symbols are unknown"}},
		GroupsTotal: 5,
		Groups: []*Group{
			{
				Root: Holder{Kind: heapdump.RootFrame, Goroutine: 812, Status: "chan receive",
					CreatedBy: &binsym.Position{Function: "main.(*server).handle", File: "/src/app/handler.go", Line: 77},
					Function:  "main.(*thumbnailer).loop", Location: &binsym.Position{Function: "main.(*thumbnailer).loop", File: "/src/app/thumb.go", Line: 30},
					RetainedBytes: 52428896, Objects: 3},
				Path: upload, Object: object, RetainedBytes: 52428800, Objects: 1, Count: 1, Goroutines: []uint64{812},
			},
			{
				Root: Holder{Kind: heapdump.RootTimer, Function: "context.WithDeadlineCause.func2",
					Location: &binsym.Position{Function: "context.WithDeadlineCause.func2", File: "/go/src/context/context.go", Line: 652},
					Creator:  &binsym.Position{Function: "main.fetch", File: "/src/app/fetch.go", Line: 12},
					Detail:   "a timer in the runtime's timer heap", RetainedBytes: 10 << 20, Objects: 60},
				Path: []Step{
					{Type: "runtime.timer", Addr: "0xc000020000", Size: 112, RetainedBytes: 10 << 20, Objects: 60},
					{Via: "func", Type: "closure context.WithDeadlineCause.func2", Addr: "0xc000020100", Size: 32, RetainedBytes: 10<<20 - 112, Objects: 59},
				},
				Object:        Object{Type: "[]uint8", Addr: "0xc000800000", Size: 2 << 20},
				RetainedBytes: 10 << 20, Objects: 5, Count: 5,
			},
			{
				Root:   Holder{Kind: heapdump.RootGlobal, Global: "main.cache", Detail: "bss segment", RetainedBytes: 0},
				Shared: true, OtherRoots: []Holder{{Kind: heapdump.RootGlobal, Global: "main.stop"}}, OtherRootsTotal: 1,
				Path:   []Step{{Via: "(the variable)", Type: "map[string]context.Context", Addr: "0xc000030000", Size: 48, RetainedBytes: 3 << 20, Objects: 9000}},
				Object: Object{Type: "map[string]context.Context", Addr: "0xc000030000", Size: 48}, RetainedBytes: 3 << 20, Objects: 9000, Count: 1,
			},
			{
				Root: Holder{Kind: heapdump.RootGoroutine, Goroutine: 9, Status: "select", Detail: "its runtime.g: pprof labels or other per-goroutine state",
					CreatedBy: &binsym.Position{Function: "main.serve.func1", File: "/src/app/serve.go", Line: 20}, RetainedBytes: 2 << 20, Objects: 4},
				Path:   []Step{{Type: "runtime.g", Addr: "0xc000040000", Size: 456, RetainedBytes: 2 << 20, Objects: 4}, {Via: ".labels", Type: "runtime/pprof.labelMap", Addr: "0xc000050000", Size: 24, RetainedBytes: 2 << 20, Objects: 3}},
				Object: Object{Type: "string", Addr: "0xc000600000", Size: 2 << 20}, RetainedBytes: 2 << 20, Objects: 1, Count: 1, Goroutines: []uint64{9},
			},
			{
				// A pile of small holdings, with a long path shortened.
				Root: Holder{Kind: heapdump.RootFrame, Goroutine: 101, Status: "chan receive",
					CreatedBy: &binsym.Position{Function: "main.serve", File: "/src/app/main.go", Line: 40},
					Function:  "main.wait", Location: &binsym.Position{Function: "main.wait", File: "/src/app/main.go", Line: 52},
					RetainedBytes: 4144, Objects: 1000003},
				Path: []Step{
					{Via: "local", Type: "main.node", Addr: "0xc000070000", Size: 32, RetainedBytes: 4144, Objects: 1000003},
					{Via: ".next", Type: "main.node", Omitted: 999950},
					{Via: ".next", Type: "main.node", Addr: "0xc000080000", Size: 32, RetainedBytes: 4112, Objects: 2},
					{Via: ".payload", Type: "[]uint8", Addr: "0xc000090000", Size: 4096, RetainedBytes: 4096, Objects: 1},
				},
				OmittedSteps: 999950, Holding: true,
				Object:        Object{Type: "main.node", Addr: "0xc000070000", Size: 32},
				RetainedBytes: 2000 * 4144, Objects: 2000 * 1000003, EachMinBytes: 4144, EachMaxBytes: 4144, Count: 2000,
				Goroutines: []uint64{101, 102, 103}, GoroutineCount: 2000,
				MadeOf: []Part{
					{Type: "main.node", Size: 32, Count: 1000002, Bytes: 32 * 1000002, AllocSite: &binsym.Position{Function: "main.link", File: "/src/app/main.go", Line: 58}},
					{Type: "[]uint8", Size: 4096, Count: 1, Bytes: 4096, AllocSite: &binsym.Position{Function: "main.read", File: "/src/app/main.go", Line: 61}},
				},
				Inside: []Step{{Via: ".next", Type: "main.node", Addr: "0xc000070020", Size: 32, RetainedBytes: 4112, Objects: 1000002}},
			},
		},
	}
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", name, t.Name(), got, want)
	}
}

func TestReportJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sampleReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", buf.Bytes())
}

func TestReportTextGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteText(&buf, PlainStyle{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range buf.String() {
		if r > 127 {
			t.Fatalf("plain text has non-ASCII %q", r)
		}
	}
	golden(t, "report.txt", buf.Bytes())
}

// A report with nothing in it still writes every list, as [], and starts
// with its schema.
func TestReportJSONEmptyLists(t *testing.T) {
	rep := &Report{Dump: "app.heapdump", GroupsTotal: 1, Groups: []*Group{{Root: Holder{Kind: heapdump.RootOther}}}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("null")) {
		t.Errorf("null in %s", b)
	}
	for _, key := range []string{`"unknown":[]`, `"other_roots":[]`, `"path":[]`, `"alloc_stack":[]`, `"goroutine_ids":[]`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("no %s in %s", key, b)
		}
	}
	if !bytes.HasPrefix(b, []byte(`{"schema":"ctxleak.holders/v2",`)) {
		t.Errorf("document does not start with the schema: %s", b)
	}
	// A value marshals as a pointer does.
	b2, err := json.Marshal(*rep)
	if err != nil || !bytes.Equal(b, b2) {
		t.Errorf("Report value: %s, %v; want %s", b2, err, b)
	}
	b, err = json.Marshal(&Report{})
	if err != nil || !bytes.Contains(b, []byte(`"groups":[]`)) {
		t.Errorf("empty report: %s, %v", b, err)
	}
}

// inputStyle names the input of one reason, as a command names its flag.
type inputStyle struct{ PlainStyle }

func (inputStyle) Input(r Reason) string {
	if r == NoBinary {
		return "--binary"
	}
	return ""
}

// The text report names the input a Reason lacks in the Style's terms, and
// the library's own sentence names none.
func TestUnknownInput(t *testing.T) {
	rep := &Report{Dump: "app.heapdump", Unknown: []Unknown{noBinary,
		{Reason: BinaryIncomplete, Text: "no DWARF (linked with -w or -s): types come from the runtime type descriptors"}}}
	for _, tt := range []struct {
		st   Style
		want []string
	}{
		{PlainStyle{}, []string{
			"  unknown   no executable given: source lines, creation sites, names of globals and closures, and types are unknown\n",
			"  unknown   no DWARF (linked with -w or -s): types come from the runtime type descriptors\n"}},
		{inputStyle{}, []string{
			"  unknown   no executable given (--binary): source lines, creation sites, names of globals and closures, and types are unknown\n",
			"  unknown   no DWARF (linked with -w or -s): types come from the runtime type descriptors\n"}},
	} {
		var buf bytes.Buffer
		if err := rep.WriteText(&buf, tt.st); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%T: text lacks %q:\n%s", tt.st, w, buf.String())
			}
		}
	}
	b, err := json.Marshal(rep.Unknown)
	if want := `[{"reason":"no_binary","text":"no executable given: source lines, creation sites, names of globals and closures, and types are unknown"},` +
		`{"reason":"binary_incomplete","text":"no DWARF (linked with -w or -s): types come from the runtime type descriptors"}]`; err != nil || string(b) != want {
		t.Errorf("JSON %s, %v; want %s", b, err, want)
	}
	if _, err := json.Marshal(Unknown{Text: "no reason"}); err == nil {
		t.Error("a zero Reason marshals")
	}
}

// The retention profile reads back with the pprof library: one sample per
// group, the holder at the bottom of its stack and the object's type on top.
func TestWriteProfile(t *testing.T) {
	rep := sampleReport()
	var buf bytes.Buffer
	if err := rep.Profile().Write(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != len(rep.Groups) {
		t.Fatalf("%d samples, want %d", len(p.Sample), len(rep.Groups))
	}
	s := p.Sample[0]
	names := make([]string, len(s.Location))
	for i, l := range s.Location {
		names[i] = l.Line[0].Function.Name
	}
	want := []string{"[]uint8 (.Body)", "main.Upload (.val)", "context.valueCtx (argument)", "frame main.(*thumbnailer).loop"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("stack %q, want %q", names, want)
	}
	if s.Value[0] != 52428800 || s.Value[1] != 1 {
		t.Errorf("values %v", s.Value)
	}
	if got := s.NumLabel["goroutine"]; len(got) != 1 || got[0] != 812 {
		t.Errorf("goroutine label %v", got)
	}
	if p.SampleType[0].Type != "retained_space" || p.SampleType[0].Unit != "bytes" {
		t.Errorf("sample type %v", p.SampleType[0])
	}
}
