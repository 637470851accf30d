// Command uploads is the service of the README's "ctxleak analyze" and "In
// a running service" examples, which TestREADME runs against it: a
// net/http server whose POST /upload handler keeps every upload in a
// goroutine that waits forever under the request's context, the way a
// forgotten background task does. It serves net/http/pprof under
// /debug/pprof/ and a watch.Watcher (with the raw heap dump endpoint) under
// /debug/ctxleak/, labels each request with request_id as the README's
// labelRequests does, and prints its base URL on stdout and each watch
// report on stderr. Try it as the README does:
//
//	go run ./cmd/ctxleak/testdata/uploads -addr localhost:6060
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ctxleak/ctxleak/watch"
)

// uploadSize is the buffer each upload is read into.
const uploadSize = 64 << 10

var (
	addr     = flag.String("addr", "127.0.0.1:0", "address to listen on")
	untilEOF = flag.Bool("until-eof", false, "exit when standard input closes (tests use it so that the service never outlives them)")
	grace    = flag.Duration("grace", watch.DefaultGrace, "watch.Options.Grace: how long a request's context may outlive it")
)

// forever is never closed: goroutines waiting on it never end.
var forever = make(chan struct{})

func main() {
	flag.Parse()
	runtime.MemProfileRate = 1 // every allocation site, as the README advises

	w := watch.New(watch.Options{
		Grace:         *grace,
		AllowHeapDump: true,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnReport:      func(r watch.Report) { r.WriteText(os.Stderr) },
	})
	defer w.Close()
	mux := http.DefaultServeMux // with net/http/pprof's handlers
	mux.Handle("/debug/ctxleak/", w.Handler())
	mux.Handle("POST /upload", w.Middleware(labelRequests(http.HandlerFunc(handleUpload))))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	if *untilEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		}()
	}
	log.Fatal(http.Serve(ln, mux))
}

// labelRequests is the README's middleware: every goroutine a handler
// starts inherits the request's request_id label.
func labelRequests(next http.Handler) http.Handler {
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strconv.FormatUint(n.Add(1), 10)
		pprof.Do(r.Context(), pprof.Labels("request_id", id), func(ctx context.Context) {
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	})
}

// handleUpload reads the upload and hands it to notify, which never
// returns: the upload and the request's context stay alive.
func handleUpload(w http.ResponseWriter, r *http.Request) {
	body := make([]byte, uploadSize)
	n, _ := io.ReadFull(r.Body, body)
	go notify(r.Context(), body)
	fmt.Fprintf(w, "%d bytes\n", n)
}

// notify waits for a signal that never comes, then uses ctx and body: both
// stay alive for as long as it waits.
//
//go:noinline
func notify(ctx context.Context, body []byte) {
	<-forever
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
	runtime.KeepAlive(body)
}
