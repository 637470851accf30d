package profiles_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/profiles"
	"github.com/google/pprof/profile"
)

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// cpuProfile is a valid profile of the wrong kind.
func cpuProfile(t *testing.T) []byte {
	b := newBuilder(&profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	})
	b.p.Sample = append(b.p.Sample, &profile.Sample{Value: []int64{1, 10_000_000}, Location: []*profile.Location{b.location(upload)}})
	return b.encode(t)
}

func TestParseErrors(t *testing.T) {
	good := newHeapBuilder().heap(1, 100, mallocgc, upload).encode(t)
	noSamples := newHeapBuilder().encode(t)
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty file", nil, "empty file, not a profile"},
		{"empty gzip", gzipped(nil), "empty profile: the gzip stream holds no data"},
		{"truncated gzip", good[:len(good)/2], "truncated gzip data: the stream stops at byte"},
		{"gzip trailer cut", good[:len(good)-4], "truncated gzip data"},
		{"corrupt gzip", append(append([]byte{}, good[:10]...), bytes.Repeat([]byte{0xff}, 40)...), "corrupt gzip data"},
		{"html", []byte("<!DOCTYPE html>\n<html><body>Not here</body></html>"), "an HTML page, not a profile"},
		{"html gzipped", gzipped([]byte("  <html><head></head></html>")), "an HTML page, not a profile"},
		{"text", []byte("hello, world\n"), "not a pprof profile: unrecognized text format"},
		{"binary", []byte{0x00, 0xff, 0xfe, 0x01, 0x02, 0x99, 0x42}, "not a pprof profile"},
		{"goroutine dump", []byte("goroutine 1 [running]:\nmain.main()\n\t/src/main.go:10 +0x1d\n"), "a goroutine dump (debug=2), not a profile"},
		{"cpu profile", cpuProfile(t), "a cpu profile (sample types samples/count, cpu/nanoseconds), not a heap, goroutine or goroutineleak profile"},
		{"no samples", noSamples, "empty heap profile: it has no samples"},
		{"blank text", []byte("\n\n  \n"), "empty profile: no data"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := profiles.Parse("in.prof", tt.data)
			if err == nil {
				t.Fatalf("parsed as %s", p.Kind)
			}
			var pe *profiles.Error
			if !errors.As(err, &pe) || pe.Source != "in.prof" || !strings.HasPrefix(err.Error(), "in.prof: ") {
				t.Errorf("error %q does not start with the source", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			t.Log(err)
		})
	}
}

func TestParseFormats(t *testing.T) {
	b := newHeapBuilder().heap(1, 100, mallocgc, upload)
	var plain bytes.Buffer
	if err := b.p.WriteUncompressed(&plain); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"gzip": b.encode(t), "plain": plain.Bytes()} {
		p, err := profiles.Parse(name, data)
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind != profiles.Heap || p.Format != profiles.Proto || p.Source != name {
			t.Errorf("%s: %+v", name, p)
		}
	}

	// A legacy text goroutine profile, as runtime/pprof writes with
	// debug=1: the labels and the names in the comments are read.
	legacy := `goroutine profile: total 4
3 @ 0x47d92e 0x4158ee 0x4dc1d9 0x483e41
# labels: {"request_id":"r-\"1\"", "route":"/upload"}
#	0x4dc1d8	main.worker+0x18	/src/main.go:10
#	0x4dc1d8	main.spawn+0x40		/src/main.go:20

1 @ 0x442931 0x4dc351 0x483e41
#	0x4dc350	main.main+0x150		/src/main.go:29
`
	p, err := profiles.Parse("goroutine.txt", []byte(legacy))
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != profiles.Goroutine || p.Format != profiles.Legacy {
		t.Fatalf("kind %s format %s", p.Kind, p.Format)
	}
	r, err := profiles.AnalyzeGoroutines([]*profiles.Profile{p}, profiles.Options{LabelValues: true, FullStack: true})
	if err != nil {
		t.Fatal(err)
	}
	g := r.Groups[0]
	if r.Total != 4 || r.Captured != 3 || g.Start.Function != "main.spawn" || g.Wait.String() != "main.worker (src/main.go:10)" ||
		g.Labels["request_id"][0] != `r-"1"` || g.Labels["route"][0] != "/upload" {
		t.Errorf("total %d captured %d, first group %+v", r.Total, r.Captured, g)
	}
	// The runtime frames the text leaves unnamed keep their addresses.
	if len(g.Stack) != 5 || g.Stack[0].Function != "0x47d92d" || g.Stack[2].Function != "main.worker" {
		t.Errorf("stack %v", g.Stack)
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	var l profiles.Loader
	for _, tt := range []struct {
		source, want string
	}{
		{filepath.Join(dir, "missing.pb.gz"), "no such file or directory"},
		{dir, "is a directory, not a profile"},
	} {
		_, err := l.Load(context.Background(), tt.source)
		if err == nil || !strings.HasPrefix(err.Error(), tt.source+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%s) = %v, want %q", tt.source, err, tt.want)
		}
	}
	big := filepath.Join(dir, "big.pb.gz")
	if err := os.WriteFile(big, newHeapBuilder().heap(1, 100, mallocgc, upload).encode(t), 0o600); err != nil {
		t.Fatal(err)
	}
	l.MaxBytes = 10
	_, err := l.Load(context.Background(), big)
	var le *profiles.LimitError
	if !errors.As(err, &le) || le.Limit != profiles.LimitSize || le.Max != 10 ||
		!strings.Contains(err.Error(), "the file is "+bytesize.Format(le.Size)+", over the profile size limit of 10 B") {
		t.Errorf("over the size limit: %v", err)
	}
}

func TestFetchURL(t *testing.T) {
	for _, tt := range []struct {
		in, out string
		kind    profiles.Kind
		err     string
	}{
		{"http://h:6060/debug/pprof/heap", "http://h:6060/debug/pprof/heap?gc=1", profiles.Heap, ""},
		{"http://h/debug/pprof/allocs?debug=1", "http://h/debug/pprof/allocs?debug=1&gc=1", profiles.Heap, ""},
		{"http://h/debug/pprof/heap?gc=0", "http://h/debug/pprof/heap?gc=0", profiles.Heap, ""},
		{"https://h/admin/pprof/heap", "https://h/admin/pprof/heap?gc=1", profiles.Heap, ""},
		{"http://h/debug/pprof/goroutine", "http://h/debug/pprof/goroutine", profiles.Goroutine, ""},
		{"http://h/debug/pprof/goroutine?debug=1", "http://h/debug/pprof/goroutine?debug=1", profiles.Goroutine, ""},
		{"http://h/profiles/latest.pb.gz", "http://h/profiles/latest.pb.gz", "", ""},
		{"http://h/debug/pprof/goroutine?debug=2", "", "", "debug=2 asks for a text dump"},
		{"http://h/debug/pprof/heap?seconds=30", "", "", "seconds= asks for a delta profile"},
		{"http://", "", "", "not a valid URL"},
	} {
		out, kind, err := profiles.FetchURL(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), tt.in+": ") {
				t.Errorf("FetchURL(%s) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || out != tt.out || kind != tt.kind {
			t.Errorf("FetchURL(%s) = %s, %q, %v; want %s, %q", tt.in, out, kind, err, tt.out, tt.kind)
		}
	}
}

func TestLoadURLErrors(t *testing.T) {
	heap := newHeapBuilder().heap(1, 100, mallocgc, upload).encode(t)
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("gc") != "1" {
			http.Error(w, "no gc=1", http.StatusBadRequest)
			return
		}
		_, _ = w.Write(heap)
	})
	mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body>profiles</body></html>"))
	})
	mux.HandleFunc("/slow/heap", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/cut/heap", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(heap[:len(heap)/2])
	})
	mux.HandleFunc("/text/heap", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("404 page not found, but with status 200\n"))
	})
	mux.HandleFunc("/empty/heap", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)

	// A port nobody listens on: listen, note the address, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/debug/pprof/heap"
	ln.Close()

	l := profiles.Loader{Timeout: 300 * time.Millisecond}
	if p, err := l.Load(context.Background(), srv.URL+"/debug/pprof/heap"); err != nil || p.Kind != profiles.Heap {
		t.Fatalf("good URL: %v", err)
	}
	for _, tt := range []struct {
		source, want string
	}{
		{closed, "connection refused"},
		{srv.URL + "/slow/heap", "no complete answer within 300ms (timed out)"},
		{srv.URL + "/nowhere/heap", "HTTP 404 Not Found (is net/http/pprof registered at this path?)"},
		{srv.URL + "/debug/pprof/", "an HTML page (Content-Type text/html), not a profile"},
		{srv.URL + "/cut/heap", "truncated gzip data"},
		{srv.URL + "/text/heap", "not a pprof profile"},
		{srv.URL + "/empty/heap", "empty file, not a profile"},
	} {
		t.Run(strings.TrimPrefix(tt.source, srv.URL), func(t *testing.T) {
			_, err := l.Load(context.Background(), tt.source)
			if err == nil || !strings.HasPrefix(err.Error(), tt.source+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v\nwant %q", err, tt.want)
			}
			t.Log(err)
		})
	}
}

func TestProgress(t *testing.T) {
	heap := newHeapBuilder().heap(1, 100, mallocgc, upload).encode(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(heap) }))
	defer srv.Close()
	var phases []string
	l := profiles.Loader{Progress: func(p profiles.Progress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	}}
	if _, err := l.Load(context.Background(), srv.URL+"/debug/pprof/heap"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(phases, ",") != "download,parse" {
		t.Errorf("phases for a URL: %v", phases)
	}
	// Small files report nothing.
	file := filepath.Join(t.TempDir(), "heap.pb.gz")
	if err := os.WriteFile(file, heap, 0o600); err != nil {
		t.Fatal(err)
	}
	phases = nil
	if _, err := l.Load(context.Background(), file); err != nil {
		t.Fatal(err)
	}
	if phases != nil {
		t.Errorf("phases for a small file: %v", phases)
	}
}

// FuzzParse checks that Parse never panics and always names its source.
func FuzzParse(f *testing.F) {
	f.Add(newHeapBuilder().heap(1, 100, mallocgc, upload).encode(f))
	f.Add(newGoroutineBuilder().goroutines(2, "request_id=1", "main.f main.go:1").encode(f))
	f.Add([]byte("goroutine profile: total 1\n1 @ 0x1 0x2\n# labels: {\"a\":\"b\"}\n#\t0x1\tmain.f+0x1\t/a.go:1\n"))
	f.Add([]byte("heap profile: 1: 100 [1: 100] @ heap/1048576\n1: 100 [1: 100] @ 0x1 0x2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profiles.Parse("fuzz", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz: ") {
				t.Fatalf("error without source: %v", err)
			}
			return
		}
		opt := profiles.Options{FullStack: len(data)%2 == 0}
		switch p.Kind {
		case profiles.Heap:
			_, err = profiles.AnalyzeHeap([]*profiles.Profile{p}, []*profiles.Profile{p}, opt)
		case profiles.Goroutine:
			_, err = profiles.AnalyzeGoroutines([]*profiles.Profile{p}, opt)
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}
