package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/profiles"
	"github.com/ctxleak/ctxleak/profiles/profilestest"
	"github.com/google/pprof/profile"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/analyze and ../../testdata/go1.*")

// fixtures writes a base heap profile, a heap profile and a goroutine
// profile, built in memory the way the Go runtime writes them, to dir:
//
//   - base.pb.gz: a 1 MiB start-up cache and two connections' buffers;
//   - heap.pb.gz: the same, plus 40 upload payloads of 64 KiB and 40
//     decoded orders of 2 KiB, allocated by handlers and still in use, and
//     40 goroutine structures;
//   - goroutine.pb.gz: 40 goroutines that a handler started under the
//     request's labels and that still wait, 2 requests in flight, and two
//     goroutines without labels.
func fixtures(t *testing.T, dir string) {
	t.Helper()
	const src = "/home/ci/work/shop/shop/"
	handler := []string{
		"net/http.HandlerFunc.ServeHTTP /usr/local/go/src/net/http/server.go:2286",
		"net/http.(*ServeMux).ServeHTTP /usr/local/go/src/net/http/server.go:2828",
		"net/http.serverHandler.ServeHTTP /usr/local/go/src/net/http/server.go:3311",
		"net/http.(*conn).serve /usr/local/go/src/net/http/server.go:2067",
	}
	alloc := []string{"runtime.mallocgc /usr/local/go/src/runtime/malloc.go:1150", "runtime.makeslice /usr/local/go/src/runtime/slice.go:117"}
	stack := func(parts ...[]string) []string {
		var s []string
		for _, p := range parts {
			s = append(s, p...)
		}
		return s
	}
	cache := stack(alloc, []string{"main.fillCache " + src + "cache.go:40", "main.main " + src + "main.go:20", "runtime.main /usr/local/go/src/runtime/proc.go:290"})
	bufio := stack(alloc, []string{"bufio.NewReaderSize /usr/local/go/src/bufio/bufio.go:57", "net/http.newBufioReader /usr/local/go/src/net/http/server.go:865", "net/http.(*conn).serve /usr/local/go/src/net/http/server.go:2017"})
	upload := stack(alloc, []string{"main.(*Server).handleUpload " + src + "upload.go:69"}, handler)
	decode := stack([]string{"runtime.mallocgc /usr/local/go/src/runtime/malloc.go:1150", "runtime.growslice /usr/local/go/src/runtime/slice.go:273",
		"io.ReadAll /usr/local/go/src/io/io.go:712", "main.decodeOrder " + src + "order.go:31", "main.(*Server).handleOrder " + src + "order.go:12"}, handler)
	malg := []string{"runtime.mallocgc /usr/local/go/src/runtime/malloc.go:1150", "runtime.newobject /usr/local/go/src/runtime/malloc.go:2157",
		"runtime.malg /usr/local/go/src/runtime/proc.go:5274", "runtime.newproc1 /usr/local/go/src/runtime/proc.go:5310"}

	base := newFixture(heapProfile())
	base.sample([]int64{64, 1 << 20}, nil, cache...)
	base.sample([]int64{2, 8192}, nil, bufio...)
	base.write(t, filepath.Join(dir, "base.pb.gz"))

	heap := newFixture(heapProfile())
	heap.sample([]int64{64, 1 << 20}, nil, cache...)
	heap.sample([]int64{3, 12288}, nil, bufio...)
	heap.sample([]int64{40, 40 * 65536}, nil, upload...)
	heap.sample([]int64{40, 40 * 2048}, nil, decode...)
	heap.sample([]int64{40, 40 * 448}, nil, malg...)
	heap.write(t, filepath.Join(dir, "heap.pb.gz"))

	gr := newFixture(goroutineProfile())
	park := []string{"runtime.gopark /usr/local/go/src/runtime/proc.go:462", "runtime.chanrecv /usr/local/go/src/runtime/chan.go:667", "runtime.chanrecv1 /usr/local/go/src/runtime/chan.go:509"}
	notify := stack(park, []string{"main.notify " + src + "notify.go:85", "main.(*Server).handleUpload.func1 " + src + "upload.go:77"})
	for i := range 40 {
		gr.sample([]int64{1}, map[string][]string{"request_id": {fmt.Sprintf("req-%03d", i+1)}, "route": {"/upload"}}, notify...)
	}
	slow := stack(park, []string{"main.(*Server).handleSlow " + src + "slow.go:20"}, handler)
	gr.sample([]int64{1}, map[string][]string{"request_id": {"req-041"}, "route": {"/slow"}}, slow...)
	gr.sample([]int64{1}, map[string][]string{"request_id": {"req-042"}, "route": {"/slow"}}, slow...)
	gr.sample([]int64{1}, nil, "runtime.gopark /usr/local/go/src/runtime/proc.go:462", "main.main "+src+"main.go:30", "runtime.main /usr/local/go/src/runtime/proc.go:290")
	gr.sample([]int64{1}, nil, "runtime.gopark /usr/local/go/src/runtime/proc.go:462", "time.Sleep /usr/local/go/src/runtime/time.go:363", "main.flushLoop "+src+"flush.go:15")
	gr.write(t, filepath.Join(dir, "goroutine.pb.gz"))
}

func heapProfile() *profile.Profile {
	return &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            512 * 1024,
		TimeNanos:         1_767_225_600_000_000_000, // 2026-01-01
	}
}

func goroutineProfile() *profile.Profile {
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "goroutine", Unit: "count"},
		Period:     1,
		TimeNanos:  1_767_225_600_000_000_000,
	}
}

type fixture struct {
	p     *profile.Profile
	funcs map[string]*profile.Function
	locs  map[string]*profile.Location
}

func newFixture(p *profile.Profile) *fixture {
	p.Mapping = []*profile.Mapping{{ID: 1, Start: 0x400000, Limit: 0x900000, File: "/usr/bin/shop", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}}
	return &fixture{p: p, funcs: map[string]*profile.Function{}, locs: map[string]*profile.Location{}}
}

// sample adds a sample: for heap profiles values are objects and bytes
// (both allocated and in use); frames are "function file:line", leaf
// first.
func (f *fixture) sample(values []int64, labels map[string][]string, frames ...string) {
	s := &profile.Sample{Value: values, Label: labels}
	if len(values) == 2 {
		s.Value = []int64{values[0], values[1], values[0], values[1]}
	}
	for _, fr := range frames {
		l := f.locs[fr]
		if l == nil {
			name, fileLine, _ := strings.Cut(fr, " ")
			i := strings.LastIndexByte(fileLine, ':')
			var line int64
			fmt.Sscan(fileLine[i+1:], &line)
			fn := f.funcs[name]
			if fn == nil {
				fn = &profile.Function{ID: uint64(len(f.funcs) + 1), Name: name, SystemName: name, Filename: fileLine[:i]}
				f.funcs[name] = fn
				f.p.Function = append(f.p.Function, fn)
			}
			l = &profile.Location{ID: uint64(len(f.locs) + 1), Mapping: f.p.Mapping[0], Address: 0x400000 + uint64(len(f.locs))*0x40,
				Line: []profile.Line{{Function: fn, Line: line}}}
			f.locs[fr] = l
			f.p.Location = append(f.p.Location, l)
		}
		s.Location = append(s.Location, l)
	}
	f.p.Sample = append(f.p.Sample, s)
}

func (f *fixture) write(t *testing.T, name string) {
	t.Helper()
	var buf bytes.Buffer
	if err := f.p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// golden compares got with testdata/analyze/name, or rewrites the file
// with -update.
func golden(t *testing.T, goldenDir, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestAnalyzeGolden pins the output formats on fixed profiles. Each golden
// file is named after the flags that make it, as in pprof, and the
// extension is the --format; "go test -update" rewrites them.
func TestAnalyzeGolden(t *testing.T) {
	goldenDir, err := filepath.Abs(filepath.Join("testdata", "analyze"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fixtures(t, dir)
	t.Chdir(dir)
	t.Setenv("NO_COLOR", "1")
	t.Setenv("GITHUB_STEP_SUMMARY", "")

	const gatesGolden = "heap.goroutine.base.requests.fail-on-growth.fail-on-retained.fail-on-goroutines.top5"
	args := []string{"analyze", "heap.pb.gz", "goroutine.pb.gz", "--base", "base.pb.gz", "--requests", "40",
		"--fail-on-growth", "1MiB", "--fail-on-retained", "16MiB", "--fail-on-goroutines", "0", "--top", "5"}
	for _, tt := range []struct {
		format, golden string
	}{
		{"text", gatesGolden + ".text"},
		{"json", gatesGolden + ".json"},
		{"github", gatesGolden + ".github"},
	} {
		t.Run(tt.format, func(t *testing.T) {
			code, stdout, stderr := ctxleak(t, append(args, "--format", tt.format)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
			}
			golden(t, goldenDir, tt.golden, stdout)
			golden(t, goldenDir, gatesGolden+".stderr", stderr)
			if tt.format == "json" {
				var doc map[string]any
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatalf("not JSON: %v", err)
				}
			}
		})
	}

	t.Run("clean", func(t *testing.T) {
		code, stdout, stderr := ctxleak(t, "analyze", "heap.pb.gz", "--top", "3", "--by", "function", "--format", "json")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		golden(t, goldenDir, "heap.top3.by-function.json", stdout)
	})

	t.Run("stacks and labels json", func(t *testing.T) {
		code, stdout, stderr := ctxleak(t, "analyze", "heap.pb.gz", "goroutine.pb.gz", "--full-stack", "--show-labels", "--top", "1", "--format", "json")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		golden(t, goldenDir, "heap.goroutine.full-stack.show-labels.top1.json", stdout)
	})

	t.Run("github pass", func(t *testing.T) {
		code, stdout, stderr := ctxleak(t, "analyze", "heap.pb.gz", "--fail-on-retained", "16MiB", "--top", "2", "--format", "github")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		golden(t, goldenDir, "heap.fail-on-retained.top2.github", stdout)
	})

	t.Run("labels and stacks", func(t *testing.T) {
		code, stdout, stderr := ctxleak(t, "analyze", "goroutine.pb.gz", "--show-labels", "--full-stack", "--top", "2")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		golden(t, goldenDir, "goroutine.show-labels.full-stack.top2.text", stdout)
	})
}

func TestAnalyzeStepSummary(t *testing.T) {
	dir := t.TempDir()
	fixtures(t, dir)
	summary := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	t.Setenv("GITHUB_WORKSPACE", "/home/ci/work/shop/shop")
	args := []string{"analyze", filepath.Join(dir, "heap.pb.gz"), filepath.Join(dir, "goroutine.pb.gz"),
		"--base", filepath.Join(dir, "base.pb.gz"), "--fail-on-goroutines", "0", "--format", "github"}
	code, stdout, _ := ctxleak(t, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	// Files under the workspace are relative to it.
	if !strings.Contains(stdout, "::error file=notify.go,line=85,title=ctxleak%3A goroutines gate::40 goroutines started in main.(*Server).handleUpload.func1") {
		t.Errorf("no annotation for the captured goroutines:\n%s", stdout)
	}
	ctxleak(t, args...)
	got, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	if !strings.HasPrefix(s, "earlier step\n### ctxleak analyze\n") || strings.Count(s, "### ctxleak analyze") != 2 ||
		!strings.Contains(s, "| 40 | `main.(*Server).handleUpload.func1 (shop/upload.go)` | `main.notify (shop/notify.go:85)` | request\\_id, route |") {
		t.Errorf("summary:\n%s", s)
	}
}

// TestAnalyzeFailOnGrowth runs a real server under a real client load,
// with a heap profile taken before the load as the base and one taken
// after by URL: the server that keeps every request's payload trips
// --fail-on-growth, the same server without the leak passes.
func TestAnalyzeFailOnGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a server")
	}
	const requests = 200 // 200 payloads of 64 KiB: 12.5 MiB when leaked
	bin := profilestest.Build(t)
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"leak", []string{"-leak"}, 1},
		{"no leak", nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := bin.Start(t, tt.args...)
			base := filepath.Join(t.TempDir(), "base.pb.gz")
			srv.Save(t, "/debug/pprof/heap?gc=1", base)
			srv.Load(t, requests, 8)
			code, stdout, stderr := ctxleak(t, "analyze", "--base", base, srv.URL+"/debug/pprof/heap",
				"--requests", fmt.Sprint(requests), "--fail-on-growth", "4MiB", "--format", "json")
			// The document from real profiles has the shape the golden
			// file pins: no key the golden lacks, and the same heap keys.
			goldenPaths := jsonPaths(t, readGolden(t, "heap.goroutine.base.requests.fail-on-growth.fail-on-retained.fail-on-goroutines.top5.json"))
			realPaths := jsonPaths(t, stdout)
			for p := range realPaths {
				if !goldenPaths[p] {
					t.Errorf("key %s is not in the golden document", p)
				}
			}
			for p := range goldenPaths {
				if strings.HasPrefix(p, "heap.") && !realPaths[p] {
					t.Errorf("key %s is missing from the document of real profiles", p)
				}
			}
			var doc struct {
				Heap struct {
					Base struct {
						GrowthBytes     int64   `json:"growth_bytes"`
						PerRequestBytes float64 `json:"per_request_bytes"`
					} `json:"base"`
				} `json:"heap"`
				Result string `json:"result"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("exit %d; stdout is not JSON (%v); stderr:\n%s", code, err, stderr)
			}
			t.Logf("growth %+d B, %.0f B per request; exit %d", doc.Heap.Base.GrowthBytes, doc.Heap.Base.PerRequestBytes, code)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if tt.code == 1 && (doc.Result != "fail" || !strings.HasPrefix(last, "ctxleak: heap in use grew by +") ||
				!strings.HasSuffix(last, "over the limit of 4.0 MiB (--fail-on-growth 4MiB)")) {
				t.Errorf("result %q, last line of stderr %q", doc.Result, last)
			}
			if tt.code == 0 && (doc.Result != "pass" || stderr != "") {
				t.Errorf("result %q, stderr %q", doc.Result, stderr)
			}
		})
	}
}

// readGolden returns the golden file testdata/analyze/name.
func readGolden(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "analyze", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// jsonPaths returns the key paths of a JSON document, such as
// "heap.sites[].growth.growth_bytes".
func jsonPaths(t *testing.T, doc string) map[string]bool {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	paths := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				paths[p] = true
				walk(p, x)
			}
		case []any:
			for _, x := range v {
				walk(prefix+"[]", x)
			}
		}
	}
	walk("", v)
	return paths
}

// TestAnalyzeInputErrors checks that unreadable input, from a file or a
// URL, exits 2 with one line that names it.
func TestAnalyzeInputErrors(t *testing.T) {
	dir := t.TempDir()
	fixtures(t, dir)
	heap, err := os.ReadFile(filepath.Join(dir, "heap.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := newFixture(heapProfile())
	empty.write(t, filepath.Join(dir, "nosamples.pb.gz"))

	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body>/debug/pprof/</body></html>")
	})
	mux.HandleFunc("/slow/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/cut/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(heap[:len(heap)/3]) })
	mux.HandleFunc("/empty/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/debug/pprof/heap"
	ln.Close()

	for _, tt := range []struct {
		name, source, want string
	}{
		{"truncated gzip", write("cut.pb.gz", heap[:len(heap)/2]), "truncated gzip data"},
		{"empty file", write("empty.pb.gz", nil), "empty file, not a profile"},
		{"no samples", filepath.Join(dir, "nosamples.pb.gz"), "empty heap profile: it has no samples"},
		{"not a profile", write("junk.bin", []byte{0, 1, 2, 0xff, 0xfe, 3}), "not a pprof profile"},
		{"unreachable", refused, "connection refused"},
		{"timeout", srv.URL + "/slow/debug/pprof/heap", "no complete answer within 200ms (timed out)"},
		{"404", srv.URL + "/nowhere/debug/pprof/heap", "HTTP 404 Not Found"},
		{"html", srv.URL + "/debug/pprof/", "an HTML page (Content-Type text/html), not a profile"},
		{"truncated download", srv.URL + "/cut/debug/pprof/heap", "truncated gzip data"},
		{"empty answer", srv.URL + "/empty/debug/pprof/heap", "empty file, not a profile"},
		{"delta profile", refused + "?seconds=30", "seconds= asks for a delta profile, which holds differences, not what is in use: fetch the profile twice and use --base"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ctxleak(t, "analyze", "--http-timeout", "200ms", tt.source)
			want := "ctxleak: " + tt.source + ": "
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, tt.want) ||
				strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q with %q", code, stdout, stderr, want, tt.want)
			}
		})
	}
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	// A clock that moves 50ms per report, however slow the machine.
	clock := time.Unix(0, 0)
	p := &progress{w: &buf, now: func() time.Time { clock = clock.Add(50 * time.Millisecond); return clock }}
	p.report(profiles.Progress{Source: "http://h/debug/pprof/heap", Phase: "download", Done: 3 << 20})
	p.report(profiles.Progress{Source: "big.pb.gz", Phase: "read", Done: 30 << 20, Total: 60 << 20})
	p.report(profiles.Progress{Source: "big.pb.gz", Phase: "parse"})
	p.clear()
	p.clear()
	want := "\r\x1b[2Kctxleak: downloading http://h/debug/pprof/heap 3.0 MiB" +
		// The read report comes within 100ms of the first: skipped.
		"\r\x1b[2Kctxleak: parsing big.pb.gz" +
		"\r\x1b[2K"
	if got := buf.String(); got != want {
		t.Errorf("progress wrote %q\nwant %q", got, want)
	}
	var nilProgress *progress
	nilProgress.clear() // no progress on a pipe: clear is a no-op
}
