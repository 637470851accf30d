package watch_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/watch"
)

// serve runs h on a real server on 127.0.0.1 and returns its base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// get fetches url and returns the body, failing t on any error.
func get(t testing.TB, c *http.Client, url string) string {
	resp, err := c.Get(url)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return string(b)
}

// waitFor polls cond with back-off until it holds, failing t after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for d := time.Millisecond; !cond(); d = min(2*d, 100*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: still not %s", limit, what)
		}
		time.Sleep(d)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type ctxKey struct{}

// cleanMux serves handlers that let go of their request: they finish their
// work, or start background work on a context of their own.
func cleanMux(bg *sync.WaitGroup) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 512)
		fmt.Fprintf(w, "%d %v", len(buf), r.Context().Err())
	})
	mux.HandleFunc("GET /background", func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(context.Background(), ctxKey{}, r.URL.Path)
		bg.Add(2)
		go func() { defer bg.Done(); _ = context.Background().Err() }()
		go func(ctx context.Context) { defer bg.Done(); _ = ctx.Value(ctxKey{}) }(context.WithoutCancel(ctx))
		io.WriteString(w, "started")
	})
	return mux
}

func TestCleanServiceOutlivesNothing(t *testing.T) {
	// The figure, 10,000 requests, takes 5-20 s under -race: it
	// runs with CTXLEAK_LONG=1; 2,000 otherwise.
	n := 2000
	if os.Getenv("CTXLEAK_LONG") != "" {
		n = 10000
	}
	// The grace is short, but long enough for a server goroutine starved
	// of CPU (-race, other tests and CPU hogs running) to finish a request
	// after its handler returned.
	w := watch.New(watch.Options{
		Grace:     250 * time.Millisecond,
		Threshold: 1,
		Logger:    quietLogger(),
		OnReport:  func(r watch.Report) { t.Logf("report: %s", r.Summary()) },
	})
	defer w.Close()
	var bg sync.WaitGroup
	base := serve(t, w.Middleware(cleanMux(&bg)))

	const conns = 10
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			for i := c; i < n; i += conns {
				path := "/work"
				if i%2 == 1 {
					path = "/background"
				}
				get(t, client, base+path)
			}
		}()
	}
	wg.Wait()
	bg.Wait()
	waitFor(t, 30*time.Second, "every request's context sorted", func() bool { return w.Stats().Pending == 0 })
	st := w.Stats()
	if st.Watched != uint64(n) || st.Outlived != 0 || st.Reports != 0 {
		t.Errorf("after %d clean requests: watched %d, outlived %d, reports %d; want %d, 0, 0",
			n, st.Watched, st.Outlived, st.Reports, n)
	}
	if l := st.Label("GET /work"); l.Watched != uint64(n/2) {
		t.Errorf("label GET /work watched %d, want %d (labels %+v)", l.Watched, n/2, st.Labels)
	}
}

// holdContext is the leak: a goroutine that keeps its request's context
// until stop is closed, long after the request. It is not inlined so that
// the goroutine has its frame (the test binary has no inlining tables).
//
//go:noinline
func holdContext(ctx context.Context, stop <-chan struct{}) {
	<-stop
	_ = ctx.Value(ctxKey{})
}

func TestLeakyHandlerIsReported(t *testing.T) {
	const leaks = 3
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the dump goes, and must be gone from
	reports := make(chan watch.Report, 1)
	w := watch.New(watch.Options{
		Grace:       20 * time.Millisecond,
		Threshold:   leaks,
		MinInterval: time.Hour,
		Logger:      quietLogger(),
		OnReport:    func(r watch.Report) { reports <- r },
	})
	defer w.Close()
	stop := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /leak", func(w http.ResponseWriter, r *http.Request) {
		go holdContext(r.Context(), stop)
		io.WriteString(w, "leaking")
	})
	base := serve(t, w.Middleware(mux))
	for range leaks {
		get(t, http.DefaultClient, base+"/leak")
	}

	var rep watch.Report
	select {
	case rep = <-reports:
	case <-time.After(60 * time.Second):
		t.Fatalf("no report after 60 s; stats %+v", w.Stats())
	}
	var text strings.Builder
	rep.WriteText(&text)
	t.Logf("dump %d bytes in %d ms, analysed in %d ms; report:\n%s", rep.DumpBytes, rep.DumpMS, rep.AnalysisMS, text.String())
	if rep.Err != "" || rep.OutlivedCount != leaks || len(rep.Values) != leaks {
		t.Fatalf("report: error %q, %d outlived, %d values; want none, %d, %d", rep.Err, rep.OutlivedCount, len(rep.Values), leaks, leaks)
	}
	for _, v := range rep.Values {
		if v.Label != "GET /leak" || v.Type != "*context.cancelCtx" {
			t.Errorf("value %s %q, want *context.cancelCtx \"GET /leak\"", v.Type, v.Label)
		}
		h := v.Holder
		if h == nil {
			t.Errorf("value %s has no holder", v.Addr)
			continue
		}
		if !strings.HasSuffix(h.Root.Function, ".holdContext") {
			t.Errorf("held by %q, want the goroutine of holdContext", h.Root.Function)
		}
		if h.Root.CreatedBy == nil || !strings.Contains(h.Root.CreatedBy.Function, "TestLeakyHandlerIsReported") || h.Root.CreatedBy.Line == 0 {
			t.Errorf("holder created by %v, want the leaky handler in TestLeakyHandlerIsReported", h.Root.CreatedBy)
		}
		if len(h.Path) == 0 || h.Path[len(h.Path)-1].Type != "context.cancelCtx" {
			t.Errorf("path %+v does not end at the context.cancelCtx", h.Path)
		}
	}
	// The summary counts the three goroutines alike, with their ids.
	var ids []uint64
	for _, v := range rep.Values {
		if v.Holder != nil {
			ids = append(ids, v.Holder.Root.Goroutine)
		}
	}
	slices.Sort(ids)
	if len(ids) != leaks {
		t.Fatalf("%d values have a holder, want %d", len(ids), leaks)
	}
	wantHeld := fmt.Sprintf(`3 *context.cancelCtx "GET /leak" are held by 3 goroutines (%d, %d and %d) frame github.com/ctxleak/ctxleak/watch_test.holdContext, created by github.com/ctxleak/ctxleak/watch_test.TestLeakyHandlerIsReported.func`, ids[0], ids[1], ids[2])
	t.Logf("summary: %s", rep.Summary())
	if sum := rep.Summary(); !strings.Contains(sum, wantHeld) {
		t.Errorf("summary %q\ndoes not contain %q", sum, wantHeld)
	}
	if !strings.Contains(text.String(), "holdContext") {
		t.Errorf("the text report does not name holdContext")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); rep.Dump != "" || len(left) != 0 {
		t.Errorf("the dump is kept: %q, %v left in TMPDIR", rep.Dump, left)
	}
	st := w.Stats()
	if l := st.Label("GET /leak"); l.Watched != leaks || l.Outlived != leaks || st.Reports != 1 {
		t.Errorf("stats %+v, want %d watched and outlived for GET /leak, 1 report", st, leaks)
	}

	close(stop)
	waitFor(t, 30*time.Second, "the leaked contexts freed", func() bool {
		runtime.GC()
		return w.Stats().Alive == 0
	})
}

// TestSummaryCountsValuesHeldAlike: the summary counts the values of the
// first value's label and type held in the same function, created at the
// same site, and no others.
func TestSummaryCountsValuesHeldAlike(t *testing.T) {
	at := &binsym.Position{Function: "main.handle", File: "/src/app/main.go", Line: 145}
	other := &binsym.Position{Function: "main.retry", File: "/src/app/main.go", Line: 200}
	frame := func(id uint64, fn string, created *binsym.Position) *heap.Group {
		return &heap.Group{
			Root:       heap.Holder{Kind: heapdump.RootFrame, Goroutine: id, Function: fn, CreatedBy: created},
			Goroutines: []uint64{id},
		}
	}
	val := func(label, typ string, g *heap.Group) watch.Value {
		return watch.Value{Label: label, Type: typ, Holder: g}
	}
	for _, tt := range []struct {
		values []watch.Value
		want   string
	}{
		{[]watch.Value{val("GET /leak", "*context.cancelCtx", frame(22, "main.hold", at))},
			`1 value outlived its grace; *context.cancelCtx "GET /leak" is held by goroutine 22 frame main.hold, created by main.handle (app/main.go:145)`},
		{[]watch.Value{
			{Label: "GET /gone", Type: "*context.cancelCtx"}, // freed before the dump
			val("GET /leak", "*context.cancelCtx", frame(24, "main.hold", at)),
			val("GET /leak", "*context.cancelCtx", frame(22, "main.hold", at)),
			val("GET /other", "*context.cancelCtx", frame(30, "main.hold", at)),
			val("GET /leak", "*context.cancelCtx", frame(31, "main.hold", other)),
			val("GET /leak", "*context.cancelCtx", frame(32, "main.wait", at)),
			val("GET /leak", "*context.timerCtx", frame(33, "main.hold", at)),
			val("GET /leak", "*context.cancelCtx", frame(23, "main.hold", at)),
		}, `8 values outlived their grace; 3 *context.cancelCtx "GET /leak" are held by 3 goroutines (22, 23 and 24) frame main.hold, created by main.handle (app/main.go:145)`},
		{[]watch.Value{{Label: "GET /gone", Type: "*context.cancelCtx"}},
			`1 value outlived its grace; freed before the dump`},
	} {
		rep := watch.Report{OutlivedCount: len(tt.values), Values: tt.values}
		if got := rep.Summary(); got != tt.want {
			t.Errorf("Summary() =\n%s\nwant\n%s", got, tt.want)
		}
	}
}
