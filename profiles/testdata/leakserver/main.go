// Command leakserver is a net/http server for ctxleak's tests. Each
// request to /upload allocates a payload in its handler; with -leak the
// handler also starts a goroutine, under the request's pprof labels, that
// keeps the payload and the request context forever, the way a forgotten
// background task does. It serves net/http/pprof, prints its base URL on
// stdout, and exits when its standard input is closed, so it never
// outlives the test that started it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
)

var (
	leak    = flag.Bool("leak", false, "keep every request's payload in a goroutine that never ends")
	payload = flag.Int("payload", 64<<10, "bytes allocated per request")
	rate    = flag.Int("memprofilerate", 1, "runtime.MemProfileRate (1 records every allocation)")
)

// cache is memory allocated at start-up, off any request path.
var cache [][]byte

// forever is never closed: goroutines waiting on it never end.
var forever = make(chan struct{})

var served atomic.Int64

func main() {
	flag.Parse()
	runtime.MemProfileRate = *rate
	cache = fillCache()

	http.HandleFunc("/upload", handleUpload)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	log.Fatal(http.Serve(ln, nil))
}

// fillCache allocates 1 MiB in 16 KiB blocks at start-up.
func fillCache() [][]byte {
	var c [][]byte
	for range 64 {
		c = append(c, make([]byte, 16<<10))
	}
	return c
}

func handleUpload(w http.ResponseWriter, r *http.Request) {
	id := strconv.FormatInt(served.Add(1), 10)
	body := make([]byte, *payload)
	for i := range body {
		body[i] = byte(i)
	}
	if *leak {
		labels := pprof.Labels("request_id", "req-"+id, "route", "/upload")
		pprof.Do(r.Context(), labels, func(ctx context.Context) {
			go notify(ctx, body)
		})
	}
	fmt.Fprintf(w, "%d %d\n", len(body), body[len(body)-1])
}

// notify waits for a signal that never comes, then uses ctx and body: both
// stay alive for as long as it waits.
func notify(ctx context.Context, body []byte) {
	<-forever
	_ = ctx.Value("k")
	runtime.KeepAlive(body)
}
