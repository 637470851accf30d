package watchprom_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ctxleak/ctxleak/watch"
	"github.com/ctxleak/ctxleak/watch/watchprom"
)

func TestCollectorCountsRequests(t *testing.T) {
	w := watch.New(watch.Options{})
	defer w.Close()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(watchprom.NewCollector(w))

	mux := http.NewServeMux()
	mux.Handle("GET /hello", w.Middleware(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.WriteString(rw, "hello")
	})))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	for range 4 {
		resp, err := http.Get(base + "/hello")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	want := `
# HELP ctxleak_watched_total Values (request contexts, tracked values) expected to become unreachable within the grace.
# TYPE ctxleak_watched_total counter
ctxleak_watched_total{label="GET /hello"} 4
# HELP ctxleak_outlived_total Values found alive after their grace.
# TYPE ctxleak_outlived_total counter
ctxleak_outlived_total{label="GET /hello"} 0
`
	if err := testutil.ScrapeAndCompare(base+"/metrics", strings.NewReader(want), "ctxleak_watched_total", "ctxleak_outlived_total"); err != nil {
		t.Error(err)
	}
	// No leak check was asked for: the leak metrics are there, at zero.
	// watch's TestLeakCheck covers them on Go 1.27.
	wantLeaks := `
# HELP ctxleak_leak_checks_total Goroutineleak profiles taken (Go 1.27 and later).
# TYPE ctxleak_leak_checks_total counter
ctxleak_leak_checks_total 0
# HELP ctxleak_leaked_goroutines Goroutines the last goroutineleak profile proved leaked.
# TYPE ctxleak_leaked_goroutines gauge
ctxleak_leaked_goroutines 0
`
	if err := testutil.ScrapeAndCompare(base+"/metrics", strings.NewReader(wantLeaks), "ctxleak_leak_checks_total", "ctxleak_leaked_goroutines"); err != nil {
		t.Error(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}
