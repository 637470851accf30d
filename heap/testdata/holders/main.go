// Command holders builds one context retention pattern around a payload,
// then writes a heap dump and prints what it knows as JSON, so that tests can
// check what "ctxleak holders" says about the dump against the program's own
// view.
//
// Usage: holders PATTERN DUMPFILE
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// payloadSize is the size of the request payload each pattern retains.
const payloadSize = 2 << 20

// Upload is the request-scoped value stored in the context.
type Upload struct {
	Name string
	Body []byte
}

type ctxKey struct{}

// newPayload is the allocation site tests look for.
//
//go:noinline
func newPayload() *Upload {
	body := make([]byte, payloadSize) // the payload's allocation site
	for i := range body {
		body[i] = byte(i)
	}
	return &Upload{Name: "upload.bin", Body: body}
}

// appCtx is a long-lived cancellable context, as a server's root context.
var appCtx, appStop = context.WithCancel(context.Background())

// cache keeps request contexts in a package-level map.
var cache = map[string]context.Context{}

// index holds large objects that hold large objects.
type index struct{ table []*[1 << 20]byte }

// nested is a small global that holds the index.
var nested *index

// sink keeps what must stay reachable for reasons unrelated to the test.
var sink []any

// used pretends to use ctx so the compiler keeps it live.
//
//go:noinline
func used(ctx context.Context) int {
	if u, ok := ctx.Value(ctxKey{}).(*Upload); ok {
		return len(u.Body)
	}
	return 0
}

// goid returns the current goroutine's id.
func goid() int64 {
	var buf [64]byte
	s := strings.TrimPrefix(string(buf[:runtime.Stack(buf[:], false)]), "goroutine ")
	id, _ := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	return id
}

// waitBlocked returns once goroutine id is parked on wait (e.g. "chan receive").
func waitBlocked(id int64, wait string) {
	prefix := fmt.Sprintf("goroutine %d [%s", id, wait)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if strings.Contains(string(buf[:n]), prefix) {
			return
		}
		runtime.Gosched()
	}
}

// result is what the program prints after the dump.
type result struct {
	Pattern     string `json:"pattern"`
	HeapAlloc   uint64 `json:"heap_alloc"`
	PayloadAddr uint64 `json:"payload_addr"`
	Goroutine   int64  `json:"goroutine,omitempty"`
}

// release ends the goroutines the patterns block; never closed before the dump.
var release = make(chan struct{})

// worker is started with the request context; the context is an argument
// of waitThenUse, the callee, which blocks and then uses it.
func worker(ctx context.Context, ready chan<- int64) {
	waitThenUse(ctx, ready)
}

//go:noinline
func waitThenUse(ctx context.Context, ready chan<- int64) {
	ready <- goid()
	<-release
	used(ctx)
}

// background is handed context.WithoutCancel(reqCtx).
func background(ctx context.Context, ready chan<- int64) {
	ready <- goid()
	<-release
	used(ctx)
}

// sender computes a result and blocks sending it to a caller that gave up.
func sender(ctx context.Context, out chan<- int, ready chan<- int64) {
	ready <- goid()
	out <- used(ctx)
	used(ctx)
}

// forgetful uses ctx once, then leaks without it.
func forgetful(ctx context.Context, ready chan<- int64) {
	used(ctx)
	ready <- goid()
	<-release
}

// scheduleRetry arms a timer whose closure captures the request context.
func scheduleRetry(ctx context.Context) *time.Timer {
	return time.AfterFunc(time.Hour, func() { used(ctx) })
}

// labelled runs in a goroutine started inside pprof.Do and inherits its labels.
func labelled(ready chan<- int64) {
	ready <- goid()
	<-release
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: holders PATTERN DUMPFILE")
		os.Exit(2)
	}
	runtime.MemProfileRate = 1
	pattern, path := os.Args[1], os.Args[2]
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	up := newPayload()
	res := result{Pattern: pattern, PayloadAddr: uint64(uintptr(unsafe.Pointer(unsafe.SliceData(up.Body))))}
	reqCtx := context.WithValue(context.Background(), ctxKey{}, up)
	ready := make(chan int64)
	switch pattern {
	case "goroutine":
		go worker(reqCtx, ready)
		res.Goroutine = <-ready
		waitBlocked(res.Goroutine, "chan receive")
	case "without-cancel":
		go background(context.WithoutCancel(reqCtx), ready)
		res.Goroutine = <-ready
		waitBlocked(res.Goroutine, "chan receive")
	case "blocked-sender":
		go sender(reqCtx, make(chan int), ready)
		res.Goroutine = <-ready
		waitBlocked(res.Goroutine, "chan send")
	case "dead-ctx":
		go forgetful(reqCtx, ready)
		res.Goroutine = <-ready
		waitBlocked(res.Goroutine, "chan receive")
	case "lost-cancel":
		reqCtx = context.WithValue(appCtx, ctxKey{}, up)
		child, _ := context.WithCancel(reqCtx) // the lost cancel is the point
		used(child)
	case "timeout":
		tctx, _ := context.WithTimeout(reqCtx, time.Hour) // the lost cancel is the point
		used(tctx)
	case "afterfunc":
		rc := reqCtx // the closure captures a copy, not the variable cleared below
		context.AfterFunc(appCtx, func() { used(rc) })
	case "timer-closure":
		scheduleRetry(reqCtx)
	case "global-cache":
		cache["req-1"] = reqCtx
	case "guarded-cache":
		guardedGlobal = guard(reqCtx)
	case "pprof-label":
		pprof.Do(context.Background(), pprof.Labels("body", string(up.Body)), func(context.Context) {
			go labelled(ready)
		})
		res.Goroutine = <-ready
		waitBlocked(res.Goroutine, "chan receive")
		// The label value is a copy of the payload: track the copy instead.
		res.PayloadAddr = 0
	case "http-request":
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, up))
			go func() {
				ready <- goid()
				<-release
				used(r.Context())
			}()
		}))
		resp, err := http.Get(srv.URL)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		resp.Body.Close()
		res.Goroutine = <-ready
		waitBlocked(res.Goroutine, "chan receive")
		sink = append(sink, srv)
	case "nested":
		// Large objects inside a large object: a global holds a 1 MiB
		// array of pointers to two 1 MiB buffers.
		table := make([]*[1 << 20]byte, (1<<20)/8)
		table[0], table[1] = new([1 << 20]byte), new([1 << 20]byte)
		nested = &index{table: table}
	case "three-uploads":
		// Three uploads, each held by its own goroutine, alike: one
		// group of three payloads held by three goroutines.
		for range 3 {
			ctx := context.WithValue(context.Background(), ctxKey{}, newPayload())
			go worker(ctx, ready)
			id := <-ready
			waitBlocked(id, "chan receive")
			threeIDs = append(threeIDs, id)
		}
	case "none":
	default:
		fmt.Fprintln(os.Stderr, "unknown pattern", pattern)
		os.Exit(2)
	}
	up, reqCtx = nil, nil

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapAlloc = ms.HeapAlloc
	debug.WriteHeapDump(f.Fd())
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(output{res, threeIDs, guardedGlobal}); err != nil {
		os.Exit(1)
	}
	runtime.KeepAlive(ready)
}

// threeIDs are the ids of the goroutines of the "three-uploads" pattern,
// in the order they started.
var threeIDs []int64

// output is what the program prints: the result, the goroutines of
// "three-uploads" and the global of "guarded-cache".
type output struct {
	result
	Goroutines []int64 `json:"goroutines,omitempty"`
	global
}
