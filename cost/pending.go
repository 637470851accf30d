package cost

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// MaxPendingConns caps the in-flight requests of the pending-http-request
// row: each is a TCP connection, two file descriptors in the child (both
// ends), so it cannot have 100,000.
const MaxPendingConns = 1000

// memory is what runtime/metrics says is in use, after a full GC.
type memory struct{ heap, stacks uint64 }

var memorySamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/stacks:bytes"},
}

// readMemory runs two full GCs (runtime.GC returns once the heap is swept;
// the second frees what sync.Pools kept as victims through the first) and
// reads the heap in use by objects and by goroutine stacks.
func readMemory() memory {
	runtime.GC()
	runtime.GC()
	metrics.Read(memorySamples)
	return memory{heap: memorySamples[0].Value.Uint64(), stacks: memorySamples[1].Value.Uint64()}
}

// perItem returns (after-before)/n rounded to a tenth of a byte, and 0
// when memory went down. The fraction is kept: what differs between
// samples is often less than a byte per item, and the interval must show it.
func perItem(before, after uint64, n int) float64 {
	if after < before {
		return 0
	}
	return math.Round(10*float64(after-before)/float64(n)) / 10
}

// measurePending makes n items pending with m, and returns the heap and
// stack bytes each one holds. What holds the items (a slice of them) is
// allocated before the first reading, so only the items are counted.
func measurePending(m *Measurement, n int) (map[string]float64, error) {
	start, undo := m.pending(n)
	defer undo()
	before := readMemory()
	if err := start(); err != nil {
		return nil, err
	}
	after := readMemory()
	return map[string]float64{
		BytesPerPending:      perItem(before.heap, after.heap, n),
		StackBytesPerPending: perItem(before.stacks, after.stacks, n),
	}, nil
}

func pendingGoroutines(n int) (start func() error, undo func()) {
	ctx, cancel := context.WithCancel(requestContext())
	var started, done sync.WaitGroup
	return func() error {
			started.Add(n)
			done.Add(n)
			for range n {
				go func(ctx context.Context) {
					started.Done()
					<-ctx.Done()
					done.Done()
				}(ctx)
			}
			started.Wait()
			return nil
		}, func() {
			cancel()
			done.Wait()
		}
}

func pendingWithTimeout(n int) (start func() error, undo func()) {
	ctx := requestContext()
	cancels := make([]context.CancelFunc, n)
	return func() error {
			for i := range cancels {
				_, cancels[i] = context.WithTimeout(ctx, time.Hour)
			}
			return nil
		}, func() {
			for _, c := range cancels {
				if c != nil {
					c()
				}
			}
		}
}

func pendingAfterFunc(n int) (start func() error, undo func()) {
	ctx, cancel := context.WithCancel(requestContext())
	stops := make([]func() bool, n)
	f := func() { sink++ }
	return func() error {
			for i := range stops {
				stops[i] = context.AfterFunc(ctx, f)
			}
			return nil
		}, func() {
			for _, s := range stops {
				if s != nil {
					s()
				}
			}
			cancel()
		}
}

func pendingTimeAfterFunc(n int) (start func() error, undo func()) {
	ctx := requestContext()
	timers := make([]*time.Timer, n)
	return func() error {
			for i := range timers {
				timers[i] = time.AfterFunc(time.Hour, func() { sink += handleCtx(ctx, requestIDKey) })
			}
			return nil
		}, func() {
			for _, t := range timers {
				if t != nil {
					t.Stop()
				}
			}
		}
}

// handled counts what the pending requests' handlers read, concurrently.
var handled atomic.Int64

// pendingRequests serves net/http on 127.0.0.1 with a handler that puts a
// value in the request context and waits; start opens n connections, each
// sending one request, and returns once all n handlers are waiting.
func pendingRequests(n int) (start func() error, undo func()) {
	release := make(chan struct{})
	var arrived, finished sync.WaitGroup
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer finished.Done()
		ctx := context.WithValue(r.Context(), requestIDKey, r.Header.Get("X-Request-Id"))
		r = r.WithContext(ctx)
		arrived.Done()
		<-release
		handled.Add(int64(handleCtx(r.Context(), requestIDKey)))
	})
	conns := make([]net.Conn, 0, n)
	ln, lnErr := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: time.Minute}
	served := make(chan struct{})
	if lnErr == nil {
		go func() { srv.Serve(ln); close(served) }()
	} else {
		close(served)
	}
	var sent int
	start = func() error {
		if lnErr != nil {
			return lnErr
		}
		arrived.Add(n)
		finished.Add(n)
		for i := range n {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				arrived.Add(-(n - sent))
				finished.Add(-(n - sent))
				return fmt.Errorf("connection %d of %d: %w", i+1, n, err)
			}
			conns = append(conns, c)
			if _, err := fmt.Fprintf(c, "GET /orders HTTP/1.1\r\nHost: ctxleak\r\nX-Request-Id: req-%d\r\n\r\n", i); err != nil {
				arrived.Add(-(n - sent))
				finished.Add(-(n - sent))
				return err
			}
			sent++
		}
		arrived.Wait()
		return nil
	}
	undo = func() {
		close(release)
		finished.Wait()
		for _, c := range conns {
			c.Close()
		}
		srv.Close()
		<-served
	}
	return start, undo
}
