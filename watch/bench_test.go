package watch_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/watch"
)

// BenchmarkMiddleware measures what the middleware adds to a request:
// each request has a context of its own, made while the timer is stopped,
// as the server makes it. Target: at most 1 µs and 2 allocations per
// request.
func BenchmarkMiddleware(b *testing.B) {
	w := watch.New(watch.Options{Grace: 50 * time.Millisecond, Logger: quietLogger()})
	defer w.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(http.ResponseWriter, *http.Request) {})
	h := w.Middleware(mux)
	rw := httptest.NewRecorder()
	base := httptest.NewRequest("GET", "/hello", nil)

	const batch = 1024
	reqs := make([]*http.Request, batch)
	cancels := make([]context.CancelFunc, batch)
	refill := func() {
		for i := range reqs {
			if cancels[i] != nil {
				cancels[i]()
			}
			ctx, cancel := context.WithCancel(context.Background())
			reqs[i], cancels[i] = base.WithContext(ctx), cancel
		}
	}
	refill()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%batch == 0 && i > 0 {
			b.StopTimer()
			refill()
			b.StartTimer()
		}
		h.ServeHTTP(rw, reqs[i%batch])
	}
}

// BenchmarkMiddlewareBaseline is BenchmarkMiddleware without the
// middleware: the difference is its cost.
func BenchmarkMiddlewareBaseline(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(http.ResponseWriter, *http.Request) {})
	rw := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/hello", nil)
	b.ReportAllocs()
	for b.Loop() {
		mux.ServeHTTP(rw, r)
	}
}

// BenchmarkLoopbackLoad compares the throughput of a real net/http server
// on 127.0.0.1 with and without the middleware, driven by 10 keep-alive
// connections for a fixed time per run, like an autocannon run: the runs
// alternate (without, with) and the medians of 9 each are reported, with
// the overhead in percent. It takes about 10 s:
//
//	go test -run '^$' -bench LoopbackLoad -benchtime 1x ./watch
func BenchmarkLoopbackLoad(b *testing.B) {
	const (
		conns  = 10
		rounds = 9
		runFor = 500 * time.Millisecond
	)
	hello := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { io.WriteString(rw, "hello") })
	w := watch.New(watch.Options{Logger: quietLogger()})
	defer w.Close()
	for range b.N {
		var bare, watched []float64
		for range rounds {
			bare = append(bare, load(b, hello, conns, runFor))
			watched = append(watched, load(b, w.Middleware(hello), conns, runFor))
		}
		mb, mw := median(bare), median(watched)
		b.ReportMetric(mb, "req/s-bare")
		b.ReportMetric(mw, "req/s-watched")
		b.ReportMetric(100*(mb-mw)/mb, "%overhead")
	}
}

// load serves h on 127.0.0.1 and returns the requests per second that conns
// keep-alive clients get done in d.
func load(b *testing.B, h http.Handler, conns int, d time.Duration) float64 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"
	var done atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer c.CloseIdleConnections()
			for time.Now().Before(stop) {
				resp, err := c.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / d.Seconds()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
