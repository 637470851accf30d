package watch_test

import (
	"encoding/json"
	"expvar"
	"log/slog"
	"net/http"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ctxleak/ctxleak/internal/leakedg"
	"github.com/ctxleak/ctxleak/internal/leaktest"
	"github.com/ctxleak/ctxleak/watch"
	"github.com/ctxleak/ctxleak/watch/watchprom"
)

// TestLeakCheckUnavailable runs on a Go without the goroutineleak
// profile: the watcher says so once, at New, and goes on watching.
func TestLeakCheckUnavailable(t *testing.T) {
	if hasLeakProfile() {
		t.Skipf("%s has the goroutineleak profile: TestLeakCheck covers it; run this test with GOTOOLCHAIN=go1.26.8 or earlier", runtime.Version())
	}
	var log syncBuffer
	w := watch.New(watch.Options{LeakInterval: 10 * time.Millisecond, LeakDump: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	defer w.Close()
	for range 3 {
		if c := w.CheckLeaks(); !strings.Contains(c.Err, "the goroutineleak profile is not available in "+runtime.Version()) {
			t.Errorf("CheckLeaks: Err %q, want the profile not available", c.Err)
		}
	}
	base := serve(t, w.Middleware(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {})))
	fetch(t, base+"/x", http.StatusOK)
	waitFor(t, 5*time.Second, "one value watched", func() bool { return w.Stats().Watched == 1 })
	st := w.Stats()
	if st.LeakProfile != watch.LeakProfileUnavailable || st.LeakChecks != 0 || st.LeakedGoroutines != 0 {
		t.Errorf("Stats: leak profile %q, %d checks, %d leaked; want unavailable, none", st.LeakProfile, st.LeakChecks, st.LeakedGoroutines)
	}
	if n := strings.Count(log.String(), "goroutineleak profile is not available"); n != 1 {
		t.Errorf("the log says %d times that the profile is not available, want once:\n%s", n, log.String())
	}
}

func hasLeakProfile() bool { return leakProfileNow() }

// TestLeakCheck serves handlers that leak goroutines, each blocked for
// ever sending on a channel no one else has, holding 16 KiB: the
// watcher's scheduled leak check dumps the heap, takes the profile, and
// reports the 20 goroutines with their bytes in Stats, the status, the
// expvar variable, the Prometheus metrics and the log. A report made
// after that has no dump (the process cannot be dumped any more) and says
// how many goroutines were proven leaked.
func TestLeakCheck(t *testing.T) {
	if !leaktest.InChild(t) {
		return
	}
	const n, each = 20, 16 << 10
	mux := http.NewServeMux()
	mux.HandleFunc("GET /leak", leakHandler(each))
	mux.Handle("GET /debug/vars", expvar.Handler())
	base := serve(t, mux)
	for range n {
		fetch(t, base+"/leak", http.StatusOK)
	}
	waitParked(t, n, "leakHandler")

	var log syncBuffer
	reports := make(chan watch.Report, 10)
	w := watch.New(watch.Options{
		Grace: 10 * time.Millisecond, Threshold: 5, MinInterval: time.Millisecond,
		LeakInterval: 20 * time.Millisecond, LeakDump: true,
		Logger:   slog.New(slog.NewTextHandler(&log, nil)),
		OnReport: func(r watch.Report) { reports <- r },
	})
	defer w.Close()
	waitFor(t, 30*time.Second, "a leak check", func() bool { return w.Stats().LeakChecks > 0 })

	st := w.Stats()
	if st.LeakProfile != watch.LeakProfileOn || st.LeakedGoroutines < n || st.LeakedRetainedBytes < n*each {
		t.Errorf("Stats: %q, %d leaked retaining %d bytes; want on, %d retaining at least %d",
			st.LeakProfile, st.LeakedGoroutines, st.LeakedRetainedBytes, n, n*each)
	}
	var status watch.Status
	if err := json.Unmarshal([]byte(fetchOK(t, w, "status")), &status); err != nil {
		t.Fatal(err)
	}
	c := status.LeakCheck
	if c == nil || len(c.Groups) == 0 {
		t.Fatalf("status: leak check %+v, want one with groups", c)
	}
	if g := c.Groups[0]; g.Count != n || !strings.Contains(g.Function, "leakHandler") || g.Wait != "chan send" ||
		!strings.Contains(g.CreatedBy, "leakHandler") {
		t.Errorf("first group %+v: want the %d goroutines of leakHandler in chan send", g, n)
	}
	// The first check had the dump; those after it are refused one.
	if c.Dumped && c.Groups[0].RetainedBytes < n*each || !c.Dumped && !strings.Contains(c.DumpErr, "refused to write a heap dump") {
		t.Errorf("last check: dumped %v, %d bytes, dump error %q; want %d bytes or the dump refused",
			c.Dumped, c.Groups[0].RetainedBytes, c.DumpErr, n*each)
	}

	var vars struct {
		Ctxleak struct {
			Leaked int    `json:"leaked_goroutine_count"`
			Bytes  uint64 `json:"leaked_retained_bytes"`
		} `json:"ctxleak"`
	}
	_, body := fetch(t, base+"/debug/vars", http.StatusOK)
	if err := json.Unmarshal([]byte(body), &vars); err != nil || vars.Ctxleak.Leaked < n || vars.Ctxleak.Bytes < n*each {
		t.Errorf("expvar ctxleak: %+v (%v), want %d leaked retaining %d bytes", vars.Ctxleak, err, n, n*each)
	}

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(watchprom.NewCollector(w))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if len(mf.GetMetric()) == 1 {
			m := mf.GetMetric()[0]
			got[mf.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	if got["ctxleak_leaked_goroutines"] < n || got["ctxleak_leaked_retained_bytes"] < n*each || got["ctxleak_leak_checks_total"] < 1 {
		t.Errorf("Prometheus metrics %v: want %d leaked goroutines, %d bytes, a check", got, n, n*each)
	}

	if !regexp.MustCompile(`level=WARN msg="ctxleak/watch: \d+ goroutines proven leaked \(goroutineleak profile\), retaining 3\d\d\.\d KiB; 20 in \S+leakHandler\S* \[chan send\], created by \S+leakHandler`).MatchString(log.String()) {
		t.Errorf("log: no line for the leak check:\n%s", log.String())
	}

	// Requests whose goroutines hold their contexts: a report is due,
	// and its dump is refused.
	mux.Handle("GET /hold", w.Middleware(leakHandler(each)))
	for range 5 {
		fetch(t, base+"/hold", http.StatusOK)
	}
	select {
	case r := <-reports:
		if r.LeakedGoroutines < n || !strings.Contains(r.Err, "refused to write a heap dump") ||
			!strings.HasSuffix(r.Summary(), strconv.Itoa(r.LeakedGoroutines)+" goroutines proven leaked") {
			t.Errorf("report: %d leaked, error %q, summary %q; want %d leaked and the dump refused", r.LeakedGoroutines, r.Err, r.Summary(), n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no report after 30 s")
	}
}

// leakHandler returns a handler that starts a goroutine holding size
// bytes and the request's context, blocked for ever sending on a channel
// no one else has.
func leakHandler(size int) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		ch := make(chan int)
		ctx := r.Context()
		go func() {
			b := payload(size)
			ch <- len(b)
			runtime.KeepAlive(b)
			runtime.KeepAlive(ctx)
		}()
	}
}

// payload returns n bytes on the heap: a make of a size the compiler
// knows could be on the goroutine's stack, which no heap dump counts.
//
//go:noinline
func payload(n int) []byte { return make([]byte, n) }

// waitParked waits, with back-off, until n goroutines in a function named
// with fn are blocked in chan send.
func waitParked(t *testing.T, n int, fn string) {
	t.Helper()
	waitFor(t, 10*time.Second, strconv.Itoa(n)+" goroutines blocked", func() bool {
		buf := make([]byte, 4<<20)
		c := 0
		for _, g := range leakedg.Parse(buf[:runtime.Stack(buf, true)], false) {
			if g.Wait == "chan send" && strings.Contains(g.Function, fn) {
				c++
			}
		}
		return c >= n
	})
}

// fetchOK gets the endpoint of w's Handler on a server of its own.
func fetchOK(t *testing.T, w *watch.Watcher, endpoint string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/debug/ctxleak/", w.Handler())
	_, body := fetch(t, serve(t, mux)+"/debug/ctxleak/"+endpoint, http.StatusOK)
	return body
}

func leakProfileNow() bool { return pprof.Lookup("goroutineleak") != nil }
