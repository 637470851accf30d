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
	"weak"

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
	// holder lists what a failure must say of who holds the body: the
	// frame's function (the callee that holds ctx, not its caller), the
	// global, the timer's closure; and the steps of the path.
	holder []string
	// alone is set when the holder must be the only one: no other root
	// is listed (a timer is reached through its P's timer heap from
	// whatever holds another timer, which is no holder of this one).
	alone bool
	// handle serves a request under the server's root context and returns
	// a func that lets go of whatever it left running, to call after the
	// check.
	handle func(server context.Context, body []byte) (release func())
}

// startServer starts the server goroutine, which holds the root context of
// every request until stop is called, as a server's main loop does.
func startServer() (root context.Context, stop func()) {
	roots := make(chan context.Context)
	done, exited := make(chan struct{}), make(chan struct{})
	go serverLoop(roots, done, exited)
	return <-roots, func() { close(done); <-exited }
}

//go:noinline
func serverLoop(roots chan<- context.Context, done <-chan struct{}, exited chan<- struct{}) {
	defer close(exited)
	root, cancel := context.WithCancel(context.Background())
	defer cancel()
	roots <- root
	<-done
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

// use reads the request's body from ctx, so that ctx is live until then.
//
//go:noinline
func use(ctx context.Context) {
	sink.Store(ctx.Value(bodyKey{}) != nil)
}

var sink atomic.Bool

func nothing() {}

const pkg = "github.com/ctxleak/ctxleak/retain_test."

var patterns = []pattern{
	{
		name: "goroutine holds ctx", retained: true,
		holder: []string{
			"], frame " + pkg + "waitThenUse (retain/patterns_test.go:",
			"created at " + pkg + "handleAudit (retain/patterns_test.go:",
			"|- argument -> context.valueCtx",
		},
		handle: handleAudit,
	},
	{
		name: "goroutine returns on ctx.Done", retained: false,
		handle: handleAuditFixed,
	},
	{
		name: "WithoutCancel to background work", retained: true,
		holder: []string{
			"], frame " + pkg + "work (retain/patterns_test.go:",
			"created at " + pkg + "handleDetached (retain/patterns_test.go:",
			"|- argument -> context.withoutCancelCtx",
		},
		handle: handleDetached,
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
		holder: []string{
			"], frame " + pkg + "serverLoop (retain/patterns_test.go:",
			"-> context.cancelCtx",
			"|- .Context -> context.valueCtx",
		},
		handle: handleJob,
	},
	{
		name: "cancel deferred under a cancellable server root", retained: false,
		handle: func(server context.Context, body []byte) func() {
			job := context.WithValue(server, bodyKey{}, body)
			ctx, cancel := deriveCancel(job)
			defer cancel()
			use(ctx)
			return nothing
		},
	},
	{
		name: "lost cancel under Background only", retained: false,
		handle: func(_ context.Context, body []byte) func() {
			job := context.WithValue(context.Background(), bodyKey{}, body)
			ctx, _ := deriveCancel(job)
			use(ctx)
			return nothing
		},
	},
	{
		name: "ctx stored in a global map", retained: true,
		holder: []string{
			"held by global " + pkg + "sessions (",
			"-> context.valueCtx",
		},
		handle: handleLogin,
	},
	{
		name: "request id stored in a global map", retained: false,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			id := nextID.Add(1)
			sessions.Store(id, "req-1")
			use(ctx)
			return func() { sessions.Delete(id) }
		},
	},
	{
		name: "time.AfterFunc closure not stopped", retained: true,
		holder: []string{
			"held by a timer that will run " + pkg + "scheduleRetry.func1 (retain/patterns_test.go:",
			"created at " + pkg + "scheduleRetry (retain/patterns_test.go:",
			"-> closure " + pkg + "scheduleRetry.func1",
		},
		alone:  true,
		handle: handleRetry,
	},
	{
		name: "time.AfterFunc closure stopped", retained: false,
		handle: func(server context.Context, body []byte) func() {
			ctx, cancel := request(server, body)
			defer cancel()
			tm := scheduleRetry(ctx)
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

// handleAudit answers at once and leaves an audit goroutine behind that
// waits for a flush and then reads the request's context: until the flush,
// the goroutine holds ctx and the body in it.
func handleAudit(server context.Context, body []byte) func() {
	ctx, cancel := request(server, body)
	defer cancel()
	flush := make(chan struct{})
	go auditWorker(ctx, flush)
	return func() { close(flush) }
}

// auditWorker hands ctx on to waitThenUse, which holds it while it blocks:
// the failure must name waitThenUse, whose argument ctx is, although the
// pointer sits in auditWorker's frame.
//
//go:noinline
func auditWorker(ctx context.Context, flush <-chan struct{}) {
	waitThenUse(ctx, flush)
}

//go:noinline
func waitThenUse(ctx context.Context, flush <-chan struct{}) {
	<-flush
	use(ctx)
}

// handleAuditFixed's goroutine gives up when the request ends.
func handleAuditFixed(server context.Context, body []byte) func() {
	ctx, cancel := request(server, body)
	defer cancel()
	flush := make(chan struct{})
	go waitOrCancel(ctx, flush)
	return func() { close(flush) }
}

//go:noinline
func waitOrCancel(ctx context.Context, flush <-chan struct{}) {
	select {
	case <-flush:
	case <-ctx.Done():
		return
	}
	use(ctx)
}

// handleDetached hands background work a context that outlives the
// request, but keeps every value of it.
func handleDetached(server context.Context, body []byte) func() {
	ctx, cancel := request(server, body)
	defer cancel()
	done := make(chan struct{})
	go work(context.WithoutCancel(ctx), done)
	return func() { close(done) }
}

// handleJob derives a cancellable context for a job and loses its cancel:
// the server's root context keeps the child in its children until the
// server stops.
func handleJob(server context.Context, body []byte) func() {
	job := context.WithValue(server, bodyKey{}, body)
	ctx, _ := deriveCancel(job)
	use(ctx)
	return nothing
}

// handleLogin keeps the request's context in a global session map.
func handleLogin(server context.Context, body []byte) func() {
	ctx, cancel := request(server, body)
	defer cancel()
	id := nextID.Add(1)
	sessions.Store(id, ctx)
	return func() { sessions.Delete(id) }
}

// handleRetry arms a retry it never stops. Only the runtime's timer heap
// holds the timer: the release func finds it through a weak pointer.
func handleRetry(server context.Context, body []byte) func() {
	ctx, cancel := request(server, body)
	defer cancel()
	tm := weak.Make(scheduleRetry(ctx))
	return func() {
		if t := tm.Value(); t != nil {
			t.Stop()
		}
	}
}

// scheduleRetry arms a retry for an hour from now that reads ctx.
//
//go:noinline
func scheduleRetry(ctx context.Context) *time.Timer {
	return time.AfterFunc(time.Hour, func() { use(ctx) })
}

// work is background work that waits for done and then uses ctx.
//
//go:noinline
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
	server, stopServer := startServer()
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
			want := append([]string{
				"retain: 1 of 1 tracked values still alive after ",
				"\n\n\"request body\" []uint8 of 1.0 MiB retains 1.0 MiB\n    tracked at retain/patterns_test.go:",
				"heap dump: " + dir,
				"run: ctxleak holders " + dir,
			}, p.holder...)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("failure lacks %q:\n%s", w, msg)
				}
			}
			if p.alone && strings.Contains(msg, "no single root holds it") {
				t.Errorf("other holders listed:\n%s", msg)
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
	server, stop := startServer()
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
