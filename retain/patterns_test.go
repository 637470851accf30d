package retain_test

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/retain"
)

// The retention patterns of shared/notes/patterns.md, each as a leaking
// handler and its fix, driven for real: goroutines block, timers are
// armed, maps and pools fill up.

type bodyKey struct{}
type idKey struct{}

// payloadSize is the request body the handlers get: large enough to be its
// own allocation, small enough to run a pattern a thousand times.
const payloadSize = 1 << 20

// A pattern serves one request with a body of payloadSize bytes.
type pattern struct {
	name     string
	retained bool // whether the body outlives the request
	// handle serves a request under the server's context and returns a func
	// that lets go of whatever it left running, to call after the check.
	handle func(server context.Context, body []byte) (release func())
}

// request is what net/http gives a handler: a context cancelled when the
// request ends, carrying the body.
func request(server context.Context, body []byte) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(server)
	return context.WithValue(ctx, bodyKey{}, body), cancel
}

// deriveCancel returns a cancellable child; callers that drop the cancel
// func model the lost cancel (hidden from vet's lostcancel check on purpose).
func deriveCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// sessions is a global map, as a cache keyed by request id would be.
var sessions sync.Map

var nextID atomic.Int64

// pool holds per-request state.
var pool sync.Pool

type reqState struct {
	ctx     context.Context
	scratch [256]byte
}

func nothing() {}

var patterns = []pattern{
	{
		name: "goroutine holds ctx", retained: true,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			done := make(chan struct{})
			go func() {
				<-done // waits on something other than ctx.Done
				runtime.KeepAlive(ctx)
			}()
			return func() { close(done) }
		},
	},
	{
		name: "goroutine returns on ctx.Done", retained: false,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			done := make(chan struct{})
			go func() {
				select {
				case <-done:
				case <-ctx.Done():
					return
				}
				runtime.KeepAlive(ctx)
			}()
			return func() { close(done) }
		},
	},
	{
		name: "WithoutCancel to background work", retained: true,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			done := make(chan struct{})
			go work(context.WithoutCancel(ctx), done)
			return func() { close(done) }
		},
	},
	{
		name: "fresh context with the request id to background work", retained: false,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			done := make(chan struct{})
			go work(context.WithValue(context.Background(), idKey{}, "req-1"), done)
			_ = ctx
			return func() { close(done) }
		},
	},
	{
		name: "lost cancel under a cancellable server root", retained: true,
		handle: func(server context.Context, body []byte) func() {
			job := context.WithValue(server, bodyKey{}, body)
			ctx, _ := deriveCancel(job)
			runtime.KeepAlive(ctx)
			return nothing // cancelling the server root lets go
		},
	},
	{
		name: "cancel deferred under a cancellable server root", retained: false,
		handle: func(server context.Context, body []byte) func() {
			job := context.WithValue(server, bodyKey{}, body)
			ctx, cancel := deriveCancel(job)
			defer cancel()
			runtime.KeepAlive(ctx)
			return nothing
		},
	},
	{
		name: "lost cancel under Background only", retained: false,
		handle: func(_ context.Context, body []byte) func() {
			job := context.WithValue(context.Background(), bodyKey{}, body)
			ctx, _ := deriveCancel(job)
			runtime.KeepAlive(ctx)
			return nothing
		},
	},
	{
		name: "ctx stored in a global map", retained: true,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			id := nextID.Add(1)
			sessions.Store(id, ctx)
			return func() { sessions.Delete(id) }
		},
	},
	{
		name: "request id stored in a global map", retained: false,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			id := nextID.Add(1)
			sessions.Store(id, "req-1")
			runtime.KeepAlive(ctx)
			return func() { sessions.Delete(id) }
		},
	},
	{
		name: "time.AfterFunc closure not stopped", retained: true,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			tm := time.AfterFunc(time.Hour, func() { runtime.KeepAlive(ctx) })
			return func() { tm.Stop() }
		},
	},
	{
		name: "time.AfterFunc closure stopped", retained: false,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			tm := time.AfterFunc(time.Hour, func() { runtime.KeepAlive(ctx) })
			defer tm.Stop()
			return nothing
		},
	},
	{
		// Freed after two GC cycles (the pool's victim cache): the check
		// must wait for that, not call it a leak.
		name: "state with ctx put in sync.Pool", retained: false,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			putState(ctx, false)
			return nothing
		},
	},
	{
		name: "state reset before sync.Pool", retained: false,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			putState(ctx, true)
			return nothing
		},
	},
}

// work is background work that waits for done and then uses ctx.
func work(ctx context.Context, done <-chan struct{}) {
	select {
	case <-done:
	case <-ctx.Done():
		return
	}
	runtime.KeepAlive(ctx.Value(idKey{}))
}

func putState(ctx context.Context, reset bool) {
	s, _ := pool.Get().(*reqState)
	if s == nil {
		s = new(reqState)
	}
	s.ctx = ctx
	if reset {
		s.ctx = nil
	}
	pool.Put(s)
}

// serve runs one request of p with a fresh body tracked by tr. The body is
// allocated here so that no frame of the test keeps it.
//
//go:noinline
func serve(p pattern, tr *retain.Tracker, server context.Context) (release func()) {
	body := make([]byte, payloadSize)
	if err := tr.Track(body, "request body"); err != nil {
		panic(err)
	}
	return p.handle(server, body)
}

// check serves one request of p and asserts the tracker's verdict through a
// recording TB; it returns the failure text, if any.
func check(t *testing.T, p pattern, opts ...retain.Option) string {
	t.Helper()
	server, stopServer := context.WithCancel(context.Background())
	defer stopServer()
	tb := &recordingTB{name: t.Name()}
	tr := retain.New(tb, opts...)
	release := serve(p, tr, server)
	ok := tr.AssertReleased()
	release()
	if ok != !p.retained {
		t.Errorf("AssertReleased = %v, want %v; failures:\n%s", ok, !p.retained, tb.text())
	}
	return tb.text()
}

func TestPatterns(t *testing.T) {
	for _, p := range patterns {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			timeout := retain.DefaultTimeout
			if p.retained {
				timeout = 200 * time.Millisecond
			}
			dir := t.TempDir()
			msg := check(t, p, retain.Timeout(timeout), retain.DumpDir(dir))
			if !p.retained {
				if msg != "" {
					t.Errorf("released pattern failed:\n%s", msg)
				}
				return
			}
			for _, want := range []string{
				`1 of 1 tracked values still alive`,
				`"request body" []uint8, 1.0 MiB at 0x`,
				"tracked at retain/patterns_test.go:",
				"heap dump: " + dir,
				"run: ctxleak holders " + dir,
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("failure lacks %q:\n%s", want, msg)
				}
			}
			checkDumps(t, dir, 1)
			t.Logf("the failure reads:\n%s", msg)
		})
	}
}

// checkDumps checks that dir holds n heap dumps, each private and complete.
func checkDumps(t *testing.T, dir string, n int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var dumps int
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".heapdump") {
			continue
		}
		dumps++
		path := dir + "/" + e.Name()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, fi.Mode().Perm())
		}
		checkDumpFile(t, path)
	}
	if dumps != n {
		t.Errorf("%s holds %d heap dumps, want %d", dir, dumps, n)
	}
}

// checkDumpFile checks the header and the end-of-dump record.
func checkDumpFile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const header = "go1.7 heap dump\n"
	if !strings.HasPrefix(string(b), header) || b[len(b)-1] != 0 {
		t.Errorf("%s is not a complete heap dump (%d bytes)", path, len(b))
	}
}

// TestPoolVictimCycle shows why the check retries: a value put in a
// sync.Pool is still alive after one GC (it moved to the victim cache) and
// is freed by the second.
func TestPoolVictimCycle(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race, sync.Pool drops a quarter of Puts at random")
	}
	// No GC may run behind the test's back between Put and the checks.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	p := patterns[len(patterns)-2]
	if !strings.Contains(p.name, "sync.Pool") || p.retained {
		t.Fatalf("pattern %q is not the pool pattern", p.name)
	}
	server, stop := context.WithCancel(context.Background())
	defer stop()
	tr := retain.NewTracker(retain.Timeout(0))
	serve(p, tr, server)
	if alive, _ := tr.Released(context.Background()); len(alive) != 1 {
		t.Fatalf("after one GC: %d values alive, want 1 (in the victim cache)", len(alive))
	}
	if alive, _ := tr.Released(context.Background()); len(alive) != 0 {
		t.Fatalf("after two GCs: %d values alive, want 0", len(alive))
	}
}
