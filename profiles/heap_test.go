package profiles_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/profiles"
)

// Frames used by the tests, leaf first in each stack.
const (
	mallocgc    = "runtime.mallocgc malloc.go:1000"
	makeslice   = "runtime.makeslice slice.go:100"
	growslice   = "runtime.growslice slice.go:200"
	bufGrow     = "bytes.(*Buffer).grow buffer.go:150"
	readAll     = "io.ReadAll io.go:700"
	slicesGrow  = "slices.Grow[go.shape.[]uint8,go.shape.uint8] slices.go:90"
	upload      = "main.upload main.go:40"
	upload2     = "main.upload main.go:44"
	handlerFunc = "net/http.HandlerFunc.ServeHTTP server.go:2286"
	serve       = "net/http.(*conn).serve server.go:2067"
	mainMain    = "main.main main.go:10"
	runtimeMain = "runtime.main proc.go:290"
	warm        = "main.warmCache cache.go:12"
)

func siteNames(r *profiles.HeapReport) []string {
	var out []string
	for _, s := range r.Sites {
		out = append(out, s.Position.String())
	}
	return out
}

func TestSites(t *testing.T) {
	b := newHeapBuilder().
		heap(2, 2<<20, mallocgc, makeslice, upload, handlerFunc, serve).                     // make in the handler
		heap(1, 4096, mallocgc, growslice, bufGrow, upload, handlerFunc, serve).             // bytes.Buffer growth
		heap(1, 512, mallocgc, growslice, bufGrow+" < "+upload2, handlerFunc, serve).        // inlined into the handler
		heap(3, 300, mallocgc, slicesGrow, readAll, upload2, handlerFunc, serve).            // generic helper, then io.ReadAll
		heap(5, 1<<20, mallocgc, makeslice, warm, mainMain, runtimeMain).                    // off the request path
		heap(1, 64, mallocgc, "runtime.malg proc.go:5274", "runtime.newproc1 proc.go:5300"). // the runtime for itself
		heap(0, 0, mallocgc, makeslice, "main.gone main.go:99", mainMain)                    // freed: not a site
	p := b.profile(t, "heap.pb.gz")

	r, err := profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"main.upload (src/main.go:40)", "main.warmCache (src/cache.go:12)", "main.upload (src/main.go:44)", "runtime.malg (src/proc.go:5274)"}
	if got := siteNames(r); !slices.Equal(got, want) {
		t.Errorf("sites = %q, want %q", got, want)
	}
	if r.InuseBytes != 2<<20+4096+512+300+1<<20+64 || r.InuseObjects != 13 {
		t.Errorf("totals %d B in %d objects", r.InuseBytes, r.InuseObjects)
	}
	if r.RequestBytes != 2<<20+4096+512+300 || r.RequestObjects != 7 {
		t.Errorf("request-scoped %d B in %d objects", r.RequestBytes, r.RequestObjects)
	}
	s := r.Sites[0]
	if s.InuseBytes != 2<<20+4096 || s.InuseObjects != 3 || !s.Request || s.RequestBytes != s.InuseBytes || s.Growth != nil || s.File != "/src/main.go" {
		t.Errorf("first site %+v", s)
	}
	if r.Sites[1].Request || r.Sites[1].RequestBytes != 0 {
		t.Errorf("main.warmCache is flagged as request-scoped")
	}

	t.Run("by function", func(t *testing.T) {
		r, err := profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{By: profiles.ByFunction})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"main.upload (src/main.go)", "main.warmCache (src/cache.go)", "runtime.malg (src/proc.go)"}
		if got := siteNames(r); !slices.Equal(got, want) {
			t.Errorf("sites = %q, want %q", got, want)
		}
		if r.Sites[0].InuseBytes != 2<<20+4096+512+300 || r.Sites[0].Line != 0 {
			t.Errorf("main.upload: %+v", r.Sites[0])
		}
	})

	t.Run("full stack", func(t *testing.T) {
		r, err := profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{FullStack: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Sites) != 6 {
			t.Fatalf("%d sites, want one per stack in use (6): %q", len(r.Sites), siteNames(r))
		}
		s := r.Sites[0]
		if s.Position.String() != "main.upload (src/main.go:40)" || len(s.Stack) != 5 || s.Stack[0].Function != "runtime.mallocgc" ||
			s.Stack[4].Function != "net/http.(*conn).serve" || s.InuseBytes != 2<<20 {
			t.Errorf("first site %s, stack %v", s.Position, s.Stack)
		}
		// The inlined location is two frames.
		for _, s := range r.Sites {
			if s.InuseBytes == 512 && (len(s.Stack) != 6 || s.Stack[2].Function != "bytes.(*Buffer).grow" || s.Stack[3].Function != "main.upload") {
				t.Errorf("inlined stack %v", s.Stack)
			}
		}
	})

	t.Run("focus and ignore", func(t *testing.T) {
		r, err := profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{
			Focus: regexp.MustCompile(`^main\.upload$`), Ignore: regexp.MustCompile(`ReadAll`)})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"main.upload (src/main.go:40)", "main.upload (src/main.go:44)"}
		if got := siteNames(r); !slices.Equal(got, want) || r.InuseBytes != 2<<20+4096+512 {
			t.Errorf("sites = %q (%d B), want %q", got, r.InuseBytes, want)
		}
		// Focus also matches file names.
		r, err = profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{Focus: regexp.MustCompile(`cache\.go`)})
		if err != nil {
			t.Fatal(err)
		}
		if got := siteNames(r); !slices.Equal(got, []string{"main.warmCache (src/cache.go:12)"}) {
			t.Errorf("focus on a file: sites %q", got)
		}
	})

	t.Run("own helpers and request path", func(t *testing.T) {
		r, err := profiles.AnalyzeHeap([]*profiles.Profile{p}, nil, profiles.Options{
			Helper:  func(fn string) bool { return profiles.IsHelper(fn) || fn == "main.upload" },
			Request: regexp.MustCompile(`^main\.main$`),
		})
		if err != nil {
			t.Fatal(err)
		}
		if r.Sites[0].Function != "net/http.HandlerFunc.ServeHTTP" || r.Sites[0].Request {
			t.Errorf("first site %s (request %v), want the handler, off the path", r.Sites[0].Position, r.Sites[0].Request)
		}
		if r.RequestBytes != 1<<20 {
			t.Errorf("request-scoped %d B, want main.main's 1 MiB", r.RequestBytes)
		}
	})
}

func TestGrowth(t *testing.T) {
	base := newHeapBuilder().
		heap(1, 1000, mallocgc, upload, handlerFunc, serve).
		heap(5, 1<<20, mallocgc, warm, mainMain).
		heap(2, 2000, mallocgc, "main.shrinks main.go:70", mainMain).
		profile(t, "base.pb.gz")
	cur := newHeapBuilder().
		heap(101, 101000, mallocgc, upload, handlerFunc, serve).
		heap(5, 1<<20, mallocgc, warm, mainMain).
		heap(7, 70000, mallocgc, "main.fresh main.go:80", handlerFunc, serve).
		profile(t, "heap.pb.gz")

	r, err := profiles.AnalyzeHeap([]*profiles.Profile{cur}, []*profiles.Profile{base}, profiles.Options{Requests: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"main.upload (src/main.go:40)", "main.fresh (src/main.go:80)", "main.warmCache (src/cache.go:12)", "main.shrinks (src/main.go:70)"}
	if got := siteNames(r); !slices.Equal(got, want) {
		t.Errorf("sites by growth = %q, want %q", got, want)
	}
	g := r.Base
	if g.InuseBytes != 1000+1<<20+2000 || g.GrowthBytes != 100000+70000-2000 || g.GrowthObjects != 100+7-2 ||
		g.NewSites != 1 || g.Requests != 100 || g.PerRequestBytes != 1680 {
		t.Errorf("growth %+v", *g)
	}
	up, fresh, shrinks := r.Sites[0].Growth, r.Sites[1].Growth, r.Sites[3].Growth
	if up.Bytes != 100000 || up.Objects != 100 || up.New || up.PerRequestBytes != 1000 || up.BaseBytes != 1000 {
		t.Errorf("main.upload growth %+v", *up)
	}
	if !fresh.New || fresh.Bytes != 70000 {
		t.Errorf("main.fresh growth %+v", *fresh)
	}
	if shrinks.Bytes != -2000 || r.Sites[3].InuseBytes != 0 {
		t.Errorf("main.shrinks growth %+v", *shrinks)
	}

	// Several profiles add up, as they do in go tool pprof.
	r2, err := profiles.AnalyzeHeap([]*profiles.Profile{cur, cur}, []*profiles.Profile{base}, profiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r2.InuseBytes != 2*r.InuseBytes || r2.Base.GrowthBytes != 2*r.InuseBytes-g.InuseBytes || r2.Base.PerRequestBytes != 0 {
		t.Errorf("two profiles: %d B in use, growth %d", r2.InuseBytes, r2.Base.GrowthBytes)
	}
}

func TestGoroutines(t *testing.T) {
	gopark, chanrecv := "runtime.gopark proc.go:400", "runtime.chanrecv1 chan.go:500"
	notify := "main.notify main.go:60"
	p := newGoroutineBuilder().
		goroutines(57, "request_id=r1", "route=/upload", gopark, chanrecv, notify).
		goroutines(3, "request_id=r2", "route=/upload", gopark, chanrecv, notify).
		goroutines(2, "request_id=r3", gopark, "main.handle main.go:30", handlerFunc, serve).
		goroutines(9, gopark, "main.worker main.go:90 < main.pool.func1 main.go:88").
		goroutines(1, "tenant=acme", gopark, "main.tick main.go:12").
		profile(t, "goroutine.pb.gz")

	r, err := profiles.AnalyzeGoroutines([]*profiles.Profile{p}, profiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 72 || r.Captured != 60 || r.InFlight != 2 {
		t.Errorf("total %d, captured %d, in flight %d", r.Total, r.Captured, r.InFlight)
	}
	var got []string
	for _, g := range r.Groups {
		got = append(got, strings.Join([]string{
			g.Start.String(), g.Wait.String(), strings.Join(g.LabelKeys, ","),
			map[bool]string{true: "captured"}[g.Captured] + map[bool]string{true: "in-flight"}[g.InFlight],
		}, " | ")+" x"+strconv.FormatInt(g.Count, 10))
		if g.Labels != nil {
			t.Errorf("label values without LabelValues: %v", g.Labels)
		}
	}
	want := []string{
		"main.notify (src/main.go) | main.notify (src/main.go:60) | request_id,route | captured x60",
		"net/http.(*conn).serve (src/server.go) | main.handle (src/main.go:30) | request_id | in-flight x2",
		"main.pool.func1 (src/main.go) | main.worker (src/main.go:90) |  |  x9",
		"main.tick (src/main.go) | main.tick (src/main.go:12) | tenant |  x1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	r, err = profiles.AnalyzeGoroutines([]*profiles.Profile{p}, profiles.Options{LabelValues: true, RequestLabels: []string{"tenant"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Captured != 1 || r.Groups[0].Start.Function != "main.tick" || !slices.Equal(r.Groups[0].Labels["tenant"], []string{"acme"}) {
		t.Errorf("with tenant as the request label: captured %d, first group %+v", r.Captured, r.Groups[0])
	}
	for _, g := range r.Groups {
		if g.Start.Function == "main.notify" && !slices.Equal(g.Labels["request_id"], []string{"r1", "r2"}) {
			t.Errorf("main.notify label values %v", g.Labels)
		}
	}

	r, err = profiles.AnalyzeGoroutines([]*profiles.Profile{p}, profiles.Options{FullStack: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Groups[0].Stack) != 3 || r.Groups[0].Stack[0].Function != "runtime.gopark" {
		t.Errorf("full stack %v", r.Groups[0].Stack)
	}
}

func TestGates(t *testing.T) {
	heap := &profiles.HeapReport{RequestBytes: 5 << 20, Base: &profiles.HeapGrowth{GrowthBytes: 12 << 20, Requests: 100, PerRequestBytes: 12 << 20 / 100}}
	gr := &profiles.GoroutineReport{Captured: 57}
	limit := func(n int64) *int64 { return &n }

	res, err := profiles.Gates{Growth: limit(10 << 20), Retained: limit(5 << 20), Goroutines: limit(0)}.Check(heap, gr)
	if err != nil {
		t.Fatal(err)
	}
	var tripped []string
	for _, r := range res {
		if r.Tripped {
			tripped = append(tripped, r.Gate)
		}
	}
	if !slices.Equal(tripped, []string{"growth", "goroutines"}) {
		t.Errorf("tripped %v, want growth and goroutines (retained is at its limit, not over)", tripped)
	}
	if want := "heap in use grew by +12.0 MiB against the base (+122.9 KiB per request over 100 requests), over the limit of 10.0 MiB"; res[0].Reason != want {
		t.Errorf("reason %q\nwant   %q", res[0].Reason, want)
	}
	if want := "57 goroutines off the request path still carry request labels, over the limit of 0"; res[2].Reason != want {
		t.Errorf("reason %q\nwant   %q", res[2].Reason, want)
	}

	if _, err := (profiles.Gates{Growth: limit(1)}).Check(&profiles.HeapReport{}, nil); err == nil {
		t.Error("growth gate without a base: no error")
	}
	if _, err := (profiles.Gates{Goroutines: limit(1)}).Check(heap, nil); err == nil {
		t.Error("goroutines gate without a goroutine profile: no error")
	}
	if _, err := (profiles.Gates{Retained: limit(1)}).Check(nil, gr); err == nil {
		t.Error("retained gate without a heap profile: no error")
	}
}
