// Command webprog builds a small heap held in several ways (a goroutine's
// frame, a global map, a timer, a deferred closure, a global slice of many
// small sessions) and writes a heap dump of it: the web view's tests browse
// that dump in a real browser.
//
// Usage: webprog DUMPFILE
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Upload is the request-scoped value stored in the contexts.
type Upload struct {
	Name string
	Body []byte
}

// Session is one of many small objects a global holds.
type Session struct {
	ID   int
	Data []byte
}

type ctxKey struct{}

// Secret fills every payload: the tests check that no page shows it.
const Secret = "SECRET-PAYLOAD-BYTES/"

//go:noinline
func newPayload(n int) *Upload {
	body := []byte(strings.Repeat(Secret, n/len(Secret)+1)[:n])
	return &Upload{Name: "upload.bin", Body: body}
}

// cache keeps request contexts in a global map.
var cache = map[string]context.Context{}

// sessions holds many small objects: a node of the dominator tree with
// more children than a page shows.
var sessions []*Session

// release is never closed before the dump.
var release = make(chan struct{})

var sink []any

//go:noinline
func use(v any) { sink = append(sink, v) }

// worker holds ctx in its frame while it waits.
func worker(ctx context.Context, ready chan<- struct{}) {
	ready <- struct{}{}
	<-release
	use(ctx.Value(ctxKey{}))
}

// deferred holds a payload in a deferred closure while it waits.
func deferred(ready chan<- struct{}) {
	for range 1 { // in a loop: a heap defer record, not an open-coded one
		up := newPayload(1 << 20)
		defer func() { use(up) }()
	}
	ready <- struct{}{}
	<-release
}

// waitBlocked waits until every goroutine running fn is blocked.
func waitBlocked(fn string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		s := string(buf[:n])
		if strings.Contains(s, "main."+fn) && !strings.Contains(s, "[runnable]:\nmain."+fn) {
			return
		}
		runtime.Gosched()
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: webprog DUMPFILE")
		os.Exit(2)
	}
	runtime.MemProfileRate = 1
	f, err := os.OpenFile(os.Args[1], os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ready := make(chan struct{})
	go worker(context.WithValue(context.Background(), ctxKey{}, newPayload(2<<20)), ready)
	<-ready
	cache["req-7"] = context.WithValue(context.Background(), ctxKey{}, newPayload(3<<20))
	tctx, _ := context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, newPayload(1<<20)), time.Hour) // the lost cancel is the point
	_ = tctx.Err()
	tctx = nil
	for i := range 300 {
		sessions = append(sessions, &Session{ID: i, Data: make([]byte, 4096)})
	}
	go deferred(ready)
	<-ready
	waitBlocked("worker")
	waitBlocked("deferred")
	runtime.GC()
	debug.WriteHeapDump(f.Fd())
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
