//go:build pilesreal

package main

// Patterns of realworld.go, built with the tag pilesreal (they import
// net/http, database/sql and more, which would make every other pattern's
// build and analysis slower): small reproductions of retention bugs real
// Go projects reported, with the standard library only. Each holds N
// request contexts (or items) of about 4 KiB, each through one holder:
//   - rw-ticker N: N goroutines in main.tick, each looping on a
//     time.Ticker never stopped, using its request context on each tick;
//   - rw-afterfunc N: N time.AfterFunc timers (an hour) whose closures use
//     a request context;
//   - rw-sqlrows N: N database/sql Rows of a query run with a request
//     context and never closed (an in-process driver): database/sql's
//     goroutine Rows.awaitDone holds each context;
//   - rw-handler N: N requests to a net/http server on 127.0.0.1 whose
//     handler, main.slowHandler, blocks holding the request (with a
//     context value of 4 KiB);
//   - rw-body N: N responses from a net/http server on 127.0.0.1 whose
//     bodies are never closed, each request made with a request context;
//   - rw-waitgroup N: N goroutines in main.groupWorker started under a
//     WaitGroup (as errgroup does), blocked;
//   - rw-parent N: N goroutines in main.watchParent blocked in a select on
//     the Done channel of a parent context that never ends;
//   - rw-blocked N: N goroutines each in main.condWait (sync.Cond.Wait),
//     main.mutexWait (sync.Mutex.Lock), main.selectForever (select {},
//     with a deferred call that uses the context), main.sleepLong
//     (time.Sleep), holding their context;
//   - rw-signal N: N signal.NotifyContext contexts over a cancellable
//     request context, never stopped: os/signal's goroutine holds each;
//   - rw-chanbuf N: N requests in the buffered channel main.queue, never
//     drained;
//   - rw-callbacks N: N closures using a request context in the global
//     slice main.hooks;
//   - rw-ctxmap N: N contexts in main.byName, a map keyed by strings
//     ("tenant-0", ...);
//   - rw-nested N: N items held by a static inside a static:
//     var registry = &registryT{cfg: &config{...}};
//   - rw-once N: N items built once (sync.OnceValue) in the global
//     main.loadItems;
//   - rw-unique N: N unique.Make handles of values holding an item, the
//     handles kept in main.handles;
//   - rw-weak N: N items only weak pointers in main.weakItems reach:
//     garbage, no holder;
//   - rw-slog N: N slog.Loggers, each With a request context attribute,
//     kept in main.loggers, a custom handler keeping the attributes;
//   - rw-bufpool N: N bytes.Buffers of 4 KiB in the sync.Pool main.bufs;
//   - rw-jsonpool N: one encoding/json encode of a value of N*4 KiB, whose
//     buffer encoding/json keeps in its pool;
//   - rw-method N: N bound methods (method values) of servers holding a
//     request context, in the global slice main.onEvent;
//   - rw-generic N: N items in main.itemCache, a generic Cache[string,
//     *item];
//   - rw-iface N: N items, each behind an interface, in main.current;
//   - rw-array N: N (at most 64) items in main.slots, an array of structs
//     of pointers;
//   - rw-cleanup N: N items reached only from runtime.AddCleanup arguments
//     of objects the global main.owners keeps;
//   - rw-timerchan N: N goroutines in main.waitTimer blocked in a select on
//     a time.Timer's channel (an hour) and their context's Done;
//   - rw-sqlwait N: N goroutines waiting for the one connection of a
//     database/sql pool (its wait queue), each with a request context;
//   - rw-customctx N: N contexts made by context.WithCancel over a custom
//     Context whose Done channel is its own, never cancelled: the
//     goroutine the context package starts to wait on it holds each;
//   - rw-syncmapstr N: N contexts in the sync.Map main.tenants, keyed by
//     strings;
//   - rw-errgroup N: N errgroup-like groups under the long-lived context
//     main.appCtx, whose Wait (and so cancel) is never called, their tasks
//     done: appCtx's children map holds each group's context;
//   - rw-finclosure N: N finalizers whose closures use a request context,
//     on objects main.finOwners keeps;
//   - rw-nilchan N: N goroutines in main.nilRecv, blocked on a nil channel;
//   - rw-globals, rw-goroutines, rw-net N: several of the above in one
//     program (see combined);
//   - rw-clean N: the same shapes let go of before the dump: tickers
//     stopped, timers stopped, rows and bodies closed, handlers returned,
//     maps and slices emptied, pools drained by two GCs.

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unique"
	"weak"
)

// The combined patterns build several of the others in one program, for
// tests that check many holders in one dump: rw-globals, rw-goroutines and
// rw-net; rw-clean builds the same shapes and lets go of them.
var combined = map[string][]string{
	"rw-globals": {"rw-chanbuf", "rw-callbacks", "rw-ctxmap", "rw-nested", "rw-once", "rw-unique", "rw-weak",
		"rw-slog", "rw-method", "rw-generic", "rw-iface", "rw-array", "rw-cleanup", "rw-afterfunc",
		"rw-syncmapstr", "rw-errgroup", "rw-finclosure", "rw-jsonpool", "rw-bufpool"}, // the pools last: a GC empties them
	"rw-goroutines": {"rw-ticker", "rw-waitgroup", "rw-parent", "rw-blocked", "rw-signal", "rw-timerchan", "rw-sqlrows", "rw-sqlwait", "rw-customctx", "rw-nilchan"},
	"rw-net":        {"rw-handler", "rw-body"},
}

func init() {
	for name, parts := range combined {
		patterns[name] = func(n int, res *result) {
			// No GC until the dump's: one moves the pools' items to their
			// victim caches, a second would drop them.
			debug.SetGCPercent(-1)
			for _, p := range parts {
				patterns[p](n, res)
			}
		}
	}
	patterns["rw-clean"] = cleanReal
	patterns["rw-ticker"] = func(n int, _ *result) { goN(n, "main.tick", "[select", tick) }
	patterns["rw-afterfunc"] = func(n int, _ *result) {
		for i := range n {
			ctx := reqCtx(i)
			time.AfterFunc(time.Hour, func() { used(ctx) })
		}
	}
	patterns["rw-sqlrows"] = sqlRows
	patterns["rw-sqlwait"] = sqlWait
	patterns["rw-handler"] = handlers
	patterns["rw-body"] = bodies
	patterns["rw-waitgroup"] = func(n int, _ *result) {
		var wg sync.WaitGroup
		wg.Add(n)
		goN(n, "main.groupWorker", "[chan receive", func(ctx context.Context, ready chan<- struct{}) { groupWorker(ctx, &wg, ready) })
		workers = &wg
	}
	patterns["rw-parent"] = func(n int, _ *result) {
		serverCtx, stopServer = context.WithCancel(context.Background())
		goN(n, "main.watchParent", "[select", watchParent)
	}
	patterns["rw-blocked"] = func(n int, _ *result) {
		stuckMu.Lock()
		goN(n, "main.condWait", "[sync.Cond.Wait", condWait)
		goN(n, "main.mutexWait", "[sync.Mutex.Lock", mutexWait)
		goN(n, "main.selectForever", "[select (no cases)", selectForever)
		goN(n, "main.sleepLong", "[sleep", sleepLong)
	}
	patterns["rw-signal"] = func(n int, _ *result) {
		for i := range n {
			ctx, cancel := context.WithCancel(reqCtx(i))
			_, stop := signal.NotifyContext(ctx, os.Interrupt)
			drop(cancel) // neither is ever called: the leak under test
			drop(stop)
			_ = i
		}
		waitBlocked("os/signal.NotifyContext.func1", "[select", n)
	}
	patterns["rw-chanbuf"] = func(n int, _ *result) {
		queue = make(chan *request, n)
		for i := range n {
			queue <- &request{id: i, ctx: reqCtx(i)}
		}
	}
	patterns["rw-callbacks"] = func(n int, _ *result) {
		for i := range n {
			addHook(reqCtx(i))
		}
	}
	patterns["rw-ctxmap"] = func(n int, _ *result) {
		byName = map[string]context.Context{}
		for i := range n {
			byName[fmt.Sprintf("tenant-%d", i)] = reqCtx(i)
		}
	}
	patterns["rw-nested"] = func(n int, res *result) {
		for i := range n {
			registry.cfg.items = append(registry.cfg.items, newItem(i))
		}
	}
	patterns["rw-once"] = func(n int, _ *result) {
		onceN = n
		if len(loadItems()) != n {
			panic("loadItems")
		}
	}
	patterns["rw-unique"] = func(n int, _ *result) {
		for i := range n {
			handles = append(handles, unique.Make(itemKey{id: i, it: newItem(i)}))
		}
	}
	patterns["rw-weak"] = func(n int, _ *result) {
		for i := range n {
			weakItems = append(weakItems, weak.Make(newItem(i)))
		}
		runtime.GC()
	}
	patterns["rw-slog"] = func(n int, _ *result) {
		base := slog.New(&keepHandler{})
		for i := range n {
			loggers = append(loggers, base.With("ctx", reqCtx(i)))
		}
	}
	patterns["rw-bufpool"] = func(n int, _ *result) {
		runtime.GOMAXPROCS(1)
		for range n {
			b := new(bytes.Buffer)
			b.Grow(itemSize)
			bufs.Put(b)
		}
	}
	patterns["rw-jsonpool"] = func(n int, _ *result) {
		runtime.GOMAXPROCS(1)
		doc := make([]string, n)
		for i := range doc {
			doc[i] = strings.Repeat("x", itemSize)
		}
		if _, err := json.Marshal(doc); err != nil {
			panic(err)
		}
	}
	patterns["rw-method"] = func(n int, _ *result) {
		for i := range n {
			s := &server{id: i, ctx: reqCtx(i)}
			onEvent = append(onEvent, s.handle)
		}
	}
	patterns["rw-generic"] = func(n int, _ *result) {
		itemCache = newCache[string, *item]()
		for i := range n {
			itemCache.put(fmt.Sprint("item-", i), newItem(i))
		}
	}
	patterns["rw-iface"] = func(n int, _ *result) {
		for i := range n {
			current = append(current, newItem(i))
		}
	}
	patterns["rw-array"] = func(n int, _ *result) {
		for i := range min(n, len(slots)) {
			slots[i].id = i
			slots[i].it = newItem(i)
			slots[i].ctx = reqCtx(i)
		}
	}
	patterns["rw-cleanup"] = func(n int, _ *result) {
		for i := range n {
			o := &owner{id: i}
			runtime.AddCleanup(o, func(it *item) { used(context.WithValue(context.Background(), ctxKey{}, it.buf)) }, newItem(i))
			owners = append(owners, o)
		}
	}
	patterns["rw-timerchan"] = func(n int, _ *result) { goN(n, "main.waitTimer", "[select", waitTimer) }
	patterns["rw-customctx"] = func(n int, _ *result) {
		for i := range n {
			_, cancel := context.WithCancel(&doneCtx{Context: reqCtx(i), done: make(chan struct{})})
			drop(cancel) // never called, and the custom parent never done
		}
		waitBlocked("context.(*cancelCtx).propagateCancel.func2", "[select", n)
	}
	patterns["rw-errgroup"] = func(n int, _ *result) {
		// errgroup.WithContext under a long-lived context, its Wait never
		// called: the group's cancel is never called either, so the
		// parent's children map keeps each group's context once its
		// tasks are done.
		appCtx, stopApp = context.WithCancel(context.Background())
		for i := range n {
			gctx, cancel := context.WithCancel(context.WithValue(appCtx, ctxKey{}, make([]byte, itemSize)))
			groups = append(groups, cancel) // what errgroup keeps: cancel, never called
			done := make(chan struct{})
			go func() { used(gctx); close(done) }()
			<-done
			_ = i
		}
		groups = nil
	}
	patterns["rw-finclosure"] = func(n int, _ *result) {
		// A finalizer whose closure uses a request context, set on
		// objects a global keeps.
		for i := range n {
			ctx := reqCtx(i)
			o := &owner{id: i}
			runtime.SetFinalizer(o, func(*owner) { used(ctx) })
			finOwners = append(finOwners, o)
		}
	}
	patterns["rw-nilchan"] = func(n int, _ *result) { goN(n, "main.nilRecv", "[chan receive (nil chan)", nilRecv) }
	patterns["rw-syncmapstr"] = func(n int, _ *result) {
		for i := range n {
			tenants.Store(fmt.Sprintf("tenant-%d", i), reqCtx(i))
		}
	}
}

// doneCtx is a Context with a Done channel of its own, which the context
// package cannot hook into: WithCancel starts a goroutine that waits on it.
type doneCtx struct {
	context.Context
	done chan struct{}
}

func (c *doneCtx) Done() <-chan struct{} { return c.done }

var tenants sync.Map

var finOwners []*owner

// appCtx is an application's long-lived context; groups are the cancel
// functions of errgroup-like groups.
var (
	appCtx  context.Context
	stopApp context.CancelFunc
	groups  []context.CancelFunc
)

// nilRecv blocks for ever on a nil channel, then uses ctx.
//
//go:noinline
func nilRecv(ctx context.Context, ready chan<- struct{}) {
	var never chan int
	ready <- struct{}{}
	<-never
	used(ctx)
}

// reqCtx is a request context carrying a value of itemSize bytes.
func reqCtx(i int) context.Context {
	return context.WithValue(context.Background(), ctxKey{}, make([]byte, itemSize))
}

// goN starts n goroutines running fn, each with a request context, and
// returns once they are blocked in state in fn.
func goN(n int, fn, state string, f func(context.Context, chan<- struct{})) {
	ready := make(chan struct{})
	for i := range n {
		go f(reqCtx(i), ready)
		<-ready
	}
	waitBlocked(fn, state, n)
}

// tick uses ctx on every tick of a ticker never stopped.
//
//go:noinline
func tick(ctx context.Context, ready chan<- struct{}) {
	t := time.NewTicker(time.Hour)
	ready <- struct{}{}
	for {
		select {
		case <-t.C:
			used(ctx)
		case <-release:
			return
		}
	}
}

var workers *sync.WaitGroup

// serverCtx is a parent context that never ends before the dump.
var (
	serverCtx  context.Context
	stopServer context.CancelFunc
)

// groupWorker is a task of a group whose Wait is never called.
//
//go:noinline
func groupWorker(ctx context.Context, wg *sync.WaitGroup, ready chan<- struct{}) {
	defer wg.Done()
	ready <- struct{}{}
	<-release
	used(ctx)
}

// watchParent waits for a parent that never ends, then uses ctx.
//
//go:noinline
func watchParent(ctx context.Context, ready chan<- struct{}) {
	ready <- struct{}{}
	select {
	case <-serverCtx.Done():
		used(ctx)
	case <-release:
	}
	used(ctx)
}

var (
	stuckMu   sync.Mutex
	stuckCond = sync.NewCond(new(sync.Mutex))
)

//go:noinline
func condWait(ctx context.Context, ready chan<- struct{}) {
	stuckCond.L.Lock()
	ready <- struct{}{}
	stuckCond.Wait()
	stuckCond.L.Unlock()
	used(ctx)
}

//go:noinline
func mutexWait(ctx context.Context, ready chan<- struct{}) {
	ready <- struct{}{}
	stuckMu.Lock()
	used(ctx)
	stuckMu.Unlock()
}

// selectForever blocks for ever; only its deferred call uses ctx.
//
//go:noinline
func selectForever(ctx context.Context, ready chan<- struct{}) {
	defer used(ctx)
	ready <- struct{}{}
	select {}
}

//go:noinline
func sleepLong(ctx context.Context, ready chan<- struct{}) {
	ready <- struct{}{}
	time.Sleep(time.Hour)
	used(ctx)
}

//go:noinline
func waitTimer(ctx context.Context, ready chan<- struct{}) {
	t := time.NewTimer(time.Hour)
	ready <- struct{}{}
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-release:
	}
	used(ctx)
}

// request is what main.queue buffers.
type request struct {
	id  int
	ctx context.Context
}

var queue chan *request

var hooks []func()

// addHook adds a callback that uses ctx to main.hooks.
//
//go:noinline
func addHook(ctx context.Context) { hooks = append(hooks, func() { used(ctx) }) }

var byName map[string]context.Context

// registryT and config are linker-allocated, one inside the other.
type registryT struct {
	name string
	cfg  *config
}

type config struct {
	limit int
	items []*item
}

var registry = &registryT{name: "default", cfg: &config{limit: 10}}

var onceN int

var loadItems = sync.OnceValue(func() []*item {
	items := make([]*item, onceN)
	for i := range items {
		items[i] = newItem(i)
	}
	return items
})

// itemKey is a comparable value holding an item, for unique.Make.
type itemKey struct {
	id int
	it *item
}

var handles []unique.Handle[itemKey]

var weakItems []weak.Pointer[item]

// keepHandler is a slog.Handler that keeps its attributes.
type keepHandler struct{ attrs []slog.Attr }

func (h *keepHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (h *keepHandler) Handle(context.Context, slog.Record) error { return nil }
func (h *keepHandler) WithGroup(string) slog.Handler             { return h }
func (h *keepHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &keepHandler{attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

var loggers []*slog.Logger

var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// server has a bound method kept in main.onEvent.
type server struct {
	id  int
	ctx context.Context
}

func (s *server) handle() { used(s.ctx) }

var onEvent []func()

// genCache is a generic cache.
type genCache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

func newCache[K comparable, V any]() *genCache[K, V] { return &genCache[K, V]{m: map[K]V{}} }

func (c *genCache[K, V]) put(k K, v V) {
	c.mu.Lock()
	c.m[k] = v
	c.mu.Unlock()
}

var itemCache *genCache[string, *item]

var current []any

var slots [64]struct {
	id  int
	it  *item
	ctx context.Context
}

// owner has a cleanup whose argument is an item.
type owner struct{ id int }

var owners []*owner

// The database/sql patterns use fakeDriver, a driver in this process whose
// rows never end.
type (
	fakeDriver struct{}
	fakeConn   struct{}
	fakeStmt   struct{}
	fakeRows   struct{}
)

func (fakeDriver) Open(string) (driver.Conn, error)         { return fakeConn{}, nil }
func (fakeConn) Prepare(string) (driver.Stmt, error)        { return fakeStmt{}, nil }
func (fakeConn) Close() error                               { return nil }
func (fakeConn) Begin() (driver.Tx, error)                  { return nil, errors.New("no tx") }
func (fakeStmt) Close() error                               { return nil }
func (fakeStmt) NumInput() int                              { return -1 }
func (fakeStmt) Exec([]driver.Value) (driver.Result, error) { return driver.ResultNoRows, nil }
func (fakeStmt) Query([]driver.Value) (driver.Rows, error)  { return fakeRows{}, nil }
func (fakeRows) Columns() []string                          { return []string{"n"} }
func (fakeRows) Close() error                               { return nil }
func (fakeRows) Next(dest []driver.Value) error             { dest[0] = int64(1); return nil }

func init() { sql.Register("piles", fakeDriver{}) }

var db *sql.DB

// openRows runs a query with ctx and leaves its rows open.
//
//go:noinline
func openRows(ctx context.Context) *sql.Rows {
	rows, err := db.QueryContext(ctx, "select n")
	if err != nil {
		panic(err)
	}
	rows.Next()
	return rows
}

var openedRows []*sql.Rows

func sqlRows(n int, _ *result) {
	db, _ = sql.Open("piles", "")
	for i := range n {
		ctx, cancel := context.WithCancel(reqCtx(i))
		drop(cancel)
		openedRows = append(openedRows, openRows(ctx))
		_ = i
	}
	waitBlocked("database/sql.(*Rows).awaitDone", "[select", n)
	openedRows = nil // only the goroutines hold them now
}

// sqlWait leaves n goroutines waiting in the pool's queue for its one
// connection, which an open Rows keeps busy.
func sqlWait(n int, _ *result) {
	db, _ = sql.Open("piles", "")
	db.SetMaxOpenConns(1)
	busy, err := db.Query("select n")
	if err != nil {
		panic(err)
	}
	openedRows = append(openedRows, busy)
	for i := range n {
		go func() {
			rows, err := db.QueryContext(reqCtx(i), "select n")
			if err == nil {
				rows.Close()
			}
		}()
	}
	waitBlocked("database/sql.(*DB).conn", "[select", n)
}

// The net/http patterns serve on 127.0.0.1.

type handlerKey struct{}

// slowHandler blocks holding its request, whose context carries a value.
func slowHandler(w http.ResponseWriter, r *http.Request) {
	r = r.WithContext(context.WithValue(r.Context(), handlerKey{}, make([]byte, itemSize)))
	<-release
	fmt.Fprint(w, r.Context().Value(handlerKey{}) != nil)
}

// serveLocal serves h on 127.0.0.1 and returns its URL.
func serveLocal(h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, h)
	return "http://" + ln.Addr().String()
}

func handlers(n int, _ *result) {
	url := serveLocal(http.HandlerFunc(slowHandler))
	for range n {
		go func() {
			if resp, err := http.Get(url); err == nil {
				resp.Body.Close()
			}
		}()
	}
	waitBlocked("main.slowHandler", "[chan receive", n)
}

var responses []*http.Response

func bodies(n int, _ *result) {
	url := serveLocal(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 64<<10)) // more than the client reads
	}))
	for i := range n {
		req, err := http.NewRequestWithContext(reqCtx(i), "GET", url, nil)
		if err != nil {
			panic(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		io.ReadFull(resp.Body, make([]byte, 10))
		drop(resp) // its body is never closed
	}
	waitBlocked("net/http.(*persistConn).writeLoop", "[select", n)
	waitBlocked("net/http.(*persistConn).readLoop", "[select", n)
}

// cleanReal builds the shapes of the other patterns and lets go of them.
func cleanReal(n int, _ *result) {
	ready := make(chan struct{})
	done := make(chan struct{})
	for i := range n {
		ctx := reqCtx(i)
		t := time.AfterFunc(time.Hour, func() { used(ctx) })
		t.Stop()
		go func() { // a ticker stopped, a goroutine that returns
			tk := time.NewTicker(time.Hour)
			tk.Stop()
			ready <- struct{}{}
			<-done
		}()
		<-ready
		hooks = append(hooks, func() { used(ctx) })
		bufs.Put(bytes.NewBuffer(make([]byte, 0, itemSize)))
	}
	hooks = nil
	db, _ = sql.Open("piles", "")
	for i := range n / 10 {
		ctx, cancel := context.WithCancel(reqCtx(i))
		rows := openRows(ctx)
		rows.Close()
		cancel()
	}
	url := serveLocal(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	for i := range n / 10 {
		req, _ := http.NewRequestWithContext(reqCtx(i), "GET", url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	http.DefaultClient.CloseIdleConnections()
	close(done)
	runtime.GC() // the pool's buffers go to its victim cache
	runtime.GC() // and are dropped
}
