package scenarios

import (
	"context"
	"errors"
	"hash/crc32"
	"regexp"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ctxleak/ctxleak/internal/english"
)

// timerDelay is the deadline of timeout-not-cancelled and the delay of
// timer-closure on the first attempt: long enough for the measurements
// before it to finish on an ordinary machine, short enough to keep the
// catalogue quick. When the timer fires before they finish (a machine too
// busy), the scenario reports errTooSlow and Run starts it again with twice
// the delay (Env.timerDelay), up to maxAttempts times.
const timerDelay = time.Second

// catalogue lists the scenarios in the order they run and are reported.
var catalogue = []*Scenario{
	{
		Name:              "request-ctx-tasks",
		Description:       "The payload is in the request context; background tasks started with that context run after the request returns.",
		Mechanism:         "each task's stack frame holds ctx -> valueCtx -> payload until the task returns",
		Expect:            "alive while the tasks run, freed when they finish",
		ExpectLeakProfile: "none: the tasks wait on a channel the scenario still holds, then end",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("tasksScenario.func1"), framesOf("task")),
			},
			{
				Name: "request-returned", Alive: true, Leaked: noneLeaked,
				Holder: holders(framesOf("task")),
				Via:    `^context\.valueCtx >`,
			},
			{Name: "tasks-done", Alive: false, Leaked: noneLeaked},
		},
		Run: requestCtxTasks,
	},
	{
		Name:              "empty-ctx-tasks",
		Description:       "The same background tasks, started with context.Background().",
		Mechanism:         "nothing the tasks hold refers to the request context",
		Expect:            "never alive after the request returns",
		ExpectLeakProfile: "none: the tasks wait on a channel the scenario still holds, then end",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("tasksScenario.func1")),
			},
			{Name: "request-returned", Alive: false, Leaked: noneLeaked},
			{Name: "tasks-done", Alive: false, Leaked: noneLeaked},
		},
		Run: emptyCtxTasks,
	},
	{
		Name:              "ids-only-ctx",
		Description:       "The background tasks get a fresh context that carries only the request id.",
		Mechanism:         "the id string is copied into a new context; the payload is not",
		Expect:            "never alive after the request returns",
		ExpectLeakProfile: "none: the tasks wait on a channel the scenario still holds, then end",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("tasksScenario.func1")),
			},
			{Name: "request-returned", Alive: false, Leaked: noneLeaked},
			{Name: "tasks-done", Alive: false, Leaked: noneLeaked},
		},
		Run: idsOnlyCtx,
	},
	{
		Name:              "without-cancel",
		Description:       "context.WithoutCancel(reqCtx) is handed to the background tasks, so they survive the request's cancellation.",
		Mechanism:         "the withoutCancelCtx keeps its parent, and so every value in the chain, while a task holds it",
		Expect:            "alive while the tasks run, freed when they finish",
		ExpectLeakProfile: "none: the tasks wait on a channel the scenario still holds, then end",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("tasksScenario.func1"), framesOf("task")),
			},
			{
				Name: "request-returned", Alive: true, Leaked: noneLeaked,
				Holder: holders(framesOf("task")),
				Via:    `^context\.withoutCancelCtx > context\.valueCtx >`,
			},
			{Name: "tasks-done", Alive: false, Leaked: noneLeaked},
		},
		Run: withoutCancel,
	},
	{
		Name:              "lost-cancel",
		Description:       "A job context carrying the payload under the app's long-lived cancellable context; a WithCancel child of it is used for a call and its cancel is never called.",
		Mechanism:         "the long-lived parent's children map holds the child cancelCtx -> valueCtx -> payload until cancel or the parent is cancelled",
		Expect:            "alive after the job returns, until the parent is cancelled",
		ExpectLeakProfile: "none: no goroutine of the scenario blocks for long",
		Phases: []Phase{
			{
				Name: "job-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("lostCancelJob"), frameOf("lostCancel")),
			},
			{
				Name: "job-returned", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("lostCancel")),
				Via:    `context\.cancelCtx > context\.valueCtx >`,
			},
			{Name: "parent-cancelled", Alive: false, Leaked: noneLeaked},
		},
		Run: lostCancel,
	},
	{
		Name:              "timeout-not-cancelled",
		Description:       "A job context carrying the payload gets context.WithTimeout(ctx, 1s) for a call; the cancel function is dropped. (The 1s doubles if the machine is too busy to measure before it.)",
		Mechanism:         "the runtime timer heap holds the timer -> closure -> timerCtx -> payload until the deadline; cancel would stop the timer",
		Expect:            "alive after the job returns, until the deadline",
		ExpectLeakProfile: "none: no goroutine of the scenario blocks for long",
		Phases: []Phase{
			{
				Name: "job-running", Alive: true, Leaked: noneLeaked,
				// The timer holds it too: another holder.
				Holder: holders(frameOf("timeoutJob"), `timer context\.WithDeadlineCause\.func2, created at `+fn("timeoutJob")),
			},
			{
				Name: "job-returned", Alive: true, Leaked: noneLeaked,
				Holder: holders(`timer context\.WithDeadlineCause\.func2, created at ` + fn("timeoutJob")),
				Via:    `^runtime\.timer > closure context\.WithDeadlineCause\.func2 > (context\.timerCtx|\?) > context\.valueCtx >`,
			},
			{Name: "deadline-passed", Alive: false, Leaked: noneLeaked},
		},
		Run: timeoutNotCancelled,
	},
	{
		Name:              "afterfunc-not-stopped",
		Description:       "The request registers context.AfterFunc(appCtx, cleanup) with a cleanup that uses the request context, and never calls stop.",
		Mechanism:         "the app context's children map holds the afterFuncCtx -> func closure -> request ctx until stop() or the app context is cancelled",
		Expect:            "alive after the request returns, until the app context is cancelled",
		ExpectLeakProfile: "none: no goroutine of the scenario blocks for long",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("afterFuncNotStopped.func1"), frameOf("afterFuncNotStopped")),
			},
			{
				Name: "request-returned", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("afterFuncNotStopped")),
				Via:    `context\.afterFuncCtx > closure scenarios\.afterFuncNotStopped\.func1\.1 > context\.valueCtx >`,
			},
			{Name: "app-cancelled", Alive: false, Leaked: noneLeaked},
		},
		Run: afterFuncNotStopped,
	},
	{
		Name:              "timer-closure",
		Description:       "The request schedules time.AfterFunc(1s, f) where the closure f captures the request context. (The 1s doubles if the machine is too busy to measure before it.)",
		Mechanism:         "the runtime timer heap holds the timer -> closure -> request ctx until the timer fires or is stopped",
		Expect:            "alive after the request returns, until the timer fires",
		ExpectLeakProfile: "none: no goroutine of the scenario blocks for long",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				// The timer holds it too: another holder.
				Holder: holders(frameOf("timerClosure.func1"), `timer scenarios\.timerClosure\.func1\.1, created at `+fn("timerClosure.func1")),
			},
			{
				Name: "request-returned", Alive: true, Leaked: noneLeaked,
				Holder: holders(`timer scenarios\.timerClosure\.func1\.1, created at ` + fn("timerClosure.func1")),
				Via:    `^runtime\.timer > closure scenarios\.timerClosure\.func1\.1 > context\.valueCtx >`,
			},
			{Name: "timer-fired", Alive: false, Leaked: noneLeaked},
		},
		Run: timerClosure,
	},
	{
		Name:              "blocked-sender",
		Description:       "A worker sends its result on an unbuffered channel after the caller gave up (the client went away); it blocks forever and uses ctx after the send.",
		Mechanism:         "the leaked worker's stack frame keeps ctx live across the blocked send, for the life of the process",
		Expect:            "alive after the request returns, for the life of the process",
		ExpectLeakProfile: "the sender once the caller gave up: nothing else reaches its channel (none before, while the worker waits on a channel the handler holds)",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("blockedSender.func1"), frameOf("sender")),
			},
			{
				Name: "request-returned", Alive: true,
				Holder: holders(frameOf("sender")),
				Leaked: leakedIn(1, "sender"),
			},
		},
		Run: blockedSender,
	},
	{
		Name:              "dead-ctx-leaked-goroutine",
		Description:       "A goroutine uses the request context, then blocks forever without using it again.",
		Mechanism:         "the goroutine leaks, but the stack map marks ctx dead after its last use, so the GC does not scan it",
		Expect:            "freed when the request returns, although the goroutine leaks",
		ExpectLeakProfile: "the goroutine at both phases: nothing live reaches the channel it waits on once the handler last used it",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true,
				Holder: holders(frameOf("deadCtxLeakedGoroutine.func1")),
				// Nothing live reaches the channel leaky waits on once the
				// handler last used it: proven leaked while it still runs.
				Leaked: leakedIn(1, "leaky"),
			},
			{Name: "request-returned", Alive: false, Leaked: leakedIn(1, "leaky")},
		},
		Run: deadCtxLeakedGoroutine,
	},
	{
		Name:              "global-cache",
		Description:       "The request context is stored in a package-level map keyed by request id; a janitor goroutine deletes the entries whose ids it receives on a package-level channel.",
		Mechanism:         "a global variable is a GC root: map -> ctx -> payload until the entry is deleted",
		Expect:            "alive after the request returns, until the entry is deleted",
		ExpectLeakProfile: "none, although the janitor blocks for ever once the entry is deleted: a global holds the channel it waits on (the profile's limit)",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("globalCache.func1"), `global scenarios\.cache`),
			},
			{
				Name: "request-returned", Alive: true, Leaked: noneLeaked,
				Holder: holders(`global scenarios\.cache`),
			},
			{Name: "entry-deleted", Alive: false, Leaked: noneLeaked},
		},
		Run: globalCache,
	},
	{
		Name:              "sync-pool",
		Description:       "A per-request state struct holding the context is put back into a sync.Pool without clearing it.",
		Mechanism:         "the pool holds the struct until the next GC, its victim cache until the one after: two cycles",
		Expect:            "freed after two GC cycles once the request returns",
		ExpectLeakProfile: "none: no goroutine of the scenario blocks for long",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("syncPool.func1")),
			},
			{Name: "request-returned", Alive: false, GCCycles: 2, Leaked: noneLeaked},
		},
		Run: syncPool,
	},
	{
		Name:              "pprof-label-value",
		Description:       "pprof.Do sets a label whose value is the payload (say, a request body as a string); goroutines started inside it get context.Background().",
		Mechanism:         "goroutines inherit the creator's pprof label set (g.labels), not its ctx: the label value lives until they exit",
		Expect:            "alive while the goroutines run, freed when they finish",
		ExpectLeakProfile: "none: the tasks wait on a channel the scenario still holds, then end",
		Phases: []Phase{
			{
				Name: "request-running", Alive: true, Leaked: noneLeaked,
				Holder: holders(frameOf("pprofLabelValue.func1"), labelsOf),
			},
			{
				Name: "request-returned", Alive: true, Leaked: noneLeaked,
				Holder: holders(labelsOf),
				Via:    `^runtime\.g > runtime/pprof\.labelMap > .* > string$`,
			},
			{Name: "tasks-done", Alive: false, Leaked: noneLeaked},
		},
		Run: pprofLabelValue,
	},
	{
		Name:              "http-server",
		Description:       "A net/http server on 127.0.0.1 reads each request body into the request context and starts background work with it; a real client sends the requests (one per task, the payload split between them).",
		Mechanism:         "each background goroutine holds ctx -> valueCtx -> body after the response is sent, until the work ends",
		Expect:            "every body alive after the responses, all freed when the background work ends",
		ExpectLeakProfile: "none: the server's goroutines wait on the network, which the profile does not judge, and the background work ends",
		Phases: []Phase{
			{
				Name: "responses-received", Alive: true, Leaked: noneLeaked,
				Holder: holders(framesOf("task")),
			},
			{Name: "background-done", Alive: false, Leaked: noneLeaked},
		},
		Run: httpServer,
	},
}

// Expected holders are regular expressions over PhaseResult.Holder, made
// with these helpers: holders joins the roots a phase's payload is held by,
// the dominating (or nearest) first.
func holders(roots ...string) string { return "^" + strings.Join(roots, ` \+ `) + "$" }

// noneLeaked expects the goroutineleak profile to prove no goroutine
// leaked at a phase.
const noneLeaked = "^none$"

// leakedIn expects the goroutineleak profile to prove n goroutines leaked
// at a phase, all blocked in the function name of this package.
func leakedIn(n int, name string) string {
	return "^" + english.Plural(n, "goroutine") + " proven leaked in " + fn(name) + "$"
}

// fn matches a function of this package and its source position.
func fn(name string) string {
	return `scenarios\.` + regexp.QuoteMeta(name) + ` \(scenarios/[a-z]+\.go:\d+\)`
}

// frameOf matches a frame of the function name in one goroutine.
func frameOf(name string) string { return `goroutine \d+ frame ` + fn(name) }

// framesOf matches frames of the function name in one or more goroutines.
func framesOf(name string) string { return `(goroutine \d+|\d+ x goroutine) frame ` + fn(name) }

// labelsOf matches the pprof label sets of one or more goroutines.
const labelsOf = `(goroutine \d+|\d+ x goroutine) \(pprof labels\)`

// All returns the catalogue in the order it runs.
func All() []*Scenario { return append([]*Scenario(nil), catalogue...) }

// Lookup finds a scenario by name: one of the catalogue, or one added
// with Register.
func Lookup(name string) (*Scenario, bool) {
	for _, s := range catalogue {
		if s.Name == name {
			return s, true
		}
	}
	registered.Lock()
	defer registered.Unlock()
	s, ok := registered.byName[name]
	return s, ok
}

// registered holds the scenarios added with Register.
var registered struct {
	sync.Mutex
	byName map[string]*Scenario
}

// Register makes scenarios outside the catalogue known to Lookup, so that
// a runner and its child processes can run them by name; All and Names do
// not list them. Tests use it for scenarios that crash, hang or misbehave
// on purpose (package scenariostest registers its own when imported). It
// panics on a name already taken.
func Register(list ...*Scenario) {
	registered.Lock()
	defer registered.Unlock()
	if registered.byName == nil {
		registered.byName = map[string]*Scenario{}
	}
	for _, s := range list {
		if _, taken := registered.byName[s.Name]; taken || slices.ContainsFunc(catalogue, func(c *Scenario) bool { return c.Name == s.Name }) {
			panic("scenarios: Register of a name already taken: " + s.Name)
		}
		registered.byName[s.Name] = s
	}
}

// Names returns the names of the catalogue, sorted.
func Names() []string {
	names := make([]string, len(catalogue))
	for i, s := range catalogue {
		names[i] = s.Name
	}
	sort.Strings(names)
	return names
}

// Context keys of the catalogue.
type (
	payloadKey   struct{}
	requestIDKey struct{}
)

// serve runs handler the way net/http runs one: its context carries the
// request id and a fresh payload, and is cancelled when the handler returns.
func serve(env *Env, handler func(ctx context.Context)) {
	reqCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	handler(withPayload(reqCtx, env.Payload()))
}

// withPayload returns a context carrying a request id and the payload.
func withPayload(parent context.Context, payload []byte) context.Context {
	ctx := context.WithValue(parent, requestIDKey{}, newRequestID())
	return context.WithValue(ctx, payloadKey{}, payload)
}

var requestSeq atomic.Int64

func newRequestID() string { return "req-" + strconv.FormatInt(requestSeq.Add(1), 10) }

// requestID returns the request id the context carries, or "".
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// sink keeps the result of work observable so that it is not optimised away.
var sink atomic.Uint32

// scratch is what work reads when the context carries no payload.
var scratch [64 << 10]byte

// work is a short piece of real work: a checksum of part of the payload the
// context carries (part of parts), or of a small buffer when there is none.
//
//go:noinline
func work(ctx context.Context, part, parts int) {
	b, _ := ctx.Value(payloadKey{}).([]byte)
	if b == nil {
		b = scratch[:]
	} else {
		b = b[len(b)*part/parts : len(b)*(part+1)/parts]
	}
	sink.Add(crc32.ChecksumIEEE(b))
}

// respond stands for the rest of a handler's work with ctx, such as writing
// the response: it keeps ctx live until the handler returns.
//
//go:noinline
func respond(ctx context.Context) {
	b, _ := ctx.Value(payloadKey{}).([]byte)
	sink.Add(uint32(len(b) + len(requestID(ctx))))
}

// task is a background task: it waits for gate (the tasks are "running"
// until it is closed), does its work with ctx, and reports done. It uses ctx
// after the wait, so ctx is live in its frame until then.
//
//go:noinline
func task(ctx context.Context, gate <-chan struct{}, wg *sync.WaitGroup, part, parts int) {
	<-gate
	work(ctx, part, parts)
	wg.Done()
}

// startTasks starts n tasks with ctx.
func startTasks(ctx context.Context, n int, gate <-chan struct{}, wg *sync.WaitGroup) {
	for i := range n {
		wg.Add(1)
		go task(ctx, gate, wg, i, n)
	}
}

// tasksScenario is the shape shared by the scenarios that start background
// tasks from a request: spawn chooses the context the tasks get.
func tasksScenario(env *Env, spawn func(reqCtx context.Context) context.Context) error {
	gate := make(chan struct{})
	var wg sync.WaitGroup
	serve(env, func(ctx context.Context) {
		startTasks(spawn(ctx), env.Tasks, gate, &wg)
		work(ctx, 0, 1)
		env.Phase("request-running")
		respond(ctx)
	})
	env.Phase("request-returned")
	close(gate)
	wg.Wait()
	env.Phase("tasks-done")
	return nil
}

func requestCtxTasks(env *Env) error {
	return tasksScenario(env, func(reqCtx context.Context) context.Context { return reqCtx })
}

func emptyCtxTasks(env *Env) error {
	return tasksScenario(env, func(context.Context) context.Context { return context.Background() })
}

func idsOnlyCtx(env *Env) error {
	return tasksScenario(env, func(reqCtx context.Context) context.Context {
		return context.WithValue(context.Background(), requestIDKey{}, requestID(reqCtx))
	})
}

func withoutCancel(env *Env) error {
	return tasksScenario(env, context.WithoutCancel)
}

// forget drops a cancel function without calling it, as buggy code does.
//
//go:noinline
func forget(context.CancelFunc) {}

// call is a synchronous call that uses its context.
//
//go:noinline
func call(ctx context.Context) error {
	work(ctx, 0, 1)
	return ctx.Err()
}

func lostCancel(env *Env) error {
	appCtx, stopApp := context.WithCancel(context.Background())
	defer stopApp()
	if err := lostCancelJob(env, appCtx); err != nil {
		return err
	}
	env.Phase("job-returned")
	stopApp()
	env.Phase("parent-cancelled")
	return nil
}

// lostCancelJob is the job of lost-cancel: its context carries the payload
// under the app's context, and the cancel of the WithCancel child it makes
// for a call is dropped. It is a function of its own, not inlined, so that
// its frame, not its caller's, holds ctx while it runs.
//
//go:noinline
func lostCancelJob(env *Env, appCtx context.Context) error {
	jobCtx := withPayload(appCtx, env.Payload())
	ctx, cancel := context.WithCancel(jobCtx)
	forget(cancel)
	err := call(ctx)
	env.Phase("job-running")
	respond(ctx)
	return err
}

// errTooSlow reports that a measurement took longer than the timer it
// raced with, which makes the attempt meaningless rather than unexpected.
// A scenario returns it only once its timer has fired, so that the payload
// of the attempt is released.
var errTooSlow = errors.New("the timer fired before the measurements finished")

func timeoutNotCancelled(env *Env) error {
	done, err := timeoutJob(env)
	if err != nil {
		return err
	}
	env.Phase("job-returned")
	select {
	case <-done:
		return errTooSlow
	default:
	}
	<-done
	env.Phase("deadline-passed")
	return nil
}

// timeoutJob is the job of timeout-not-cancelled: it makes a WithTimeout
// child of its context for a call and drops the cancel. It returns the
// child's Done channel, closed at the deadline. Not inlined, so that its
// frame holds ctx while it runs.
//
//go:noinline
func timeoutJob(env *Env) (<-chan struct{}, error) {
	jobCtx := withPayload(context.Background(), env.Payload())
	ctx, cancel := context.WithTimeout(jobCtx, env.timerDelay())
	forget(cancel)
	err := call(ctx)
	env.Phase("job-running")
	respond(ctx)
	return ctx.Done(), err
}

// cleanup is the work an AfterFunc or timer callback does with ctx.
//
//go:noinline
func cleanup(ctx context.Context) { work(ctx, 0, 1) }

func afterFuncNotStopped(env *Env) error {
	appCtx, stopApp := context.WithCancel(context.Background())
	defer stopApp()
	ran := make(chan struct{})
	serve(env, func(ctx context.Context) {
		stop := context.AfterFunc(appCtx, func() {
			cleanup(ctx)
			close(ran)
		})
		_ = stop // never called: the bug
		env.Phase("request-running")
		respond(ctx)
	})
	env.Phase("request-returned")
	stopApp()
	<-ran
	env.Phase("app-cancelled")
	return nil
}

func timerClosure(env *Env) error {
	fired := make(chan struct{})
	serve(env, func(ctx context.Context) {
		time.AfterFunc(env.timerDelay(), func() {
			cleanup(ctx)
			close(fired)
		})
		env.Phase("request-running")
		respond(ctx)
	})
	env.Phase("request-returned")
	select {
	case <-fired:
		return errTooSlow
	default:
	}
	<-fired
	env.Phase("timer-fired")
	return nil
}

// sender computes a result and sends it on out, which nobody reads once
// the caller gave up; it logs with ctx after the send.
//
//go:noinline
func sender(ctx context.Context, gate <-chan struct{}, out chan<- int) {
	<-gate
	work(ctx, 0, 1)
	out <- len(requestID(ctx))
	cleanup(ctx) // never reached
}

func blockedSender(env *Env) error {
	gate := make(chan struct{})
	reqCtx, disconnect := context.WithCancel(context.Background())
	defer disconnect()
	handler := func(ctx context.Context) error {
		out := make(chan int) // unbuffered: the bug
		go sender(ctx, gate, out)
		env.Phase("request-running")
		disconnect() // the client goes away before the result is ready
		select {
		case <-out:
			return errors.New("the worker's result arrived before the caller gave up")
		case <-ctx.Done():
			return nil
		}
	}
	if err := handler(withPayload(reqCtx, env.Payload())); err != nil {
		return err
	}
	close(gate) // the worker finishes its work and blocks on the send forever
	env.Phase("request-returned")
	return nil
}

// leaky uses ctx, says it has started, then blocks forever without using
// ctx again.
//
//go:noinline
func leaky(ctx context.Context, started chan<- struct{}, never <-chan struct{}) {
	work(ctx, 0, 1)
	close(started)
	<-never
}

func deadCtxLeakedGoroutine(env *Env) error {
	never := make(chan struct{})
	started := make(chan struct{})
	serve(env, func(ctx context.Context) {
		go leaky(ctx, started, never)
		<-started
		env.Phase("request-running")
		respond(ctx)
	})
	env.Phase("request-returned")
	return nil
}

// cache is a package-level cache of request contexts by id: the bug.
var cache = struct {
	sync.Mutex
	m map[string]context.Context
}{m: map[string]context.Context{}}

// evictions carries the ids of cache entries to delete to the cache's
// janitor. A global holds the channel, so the goroutineleak profile counts
// it as reachable: a janitor blocked on it is never reported leaked, even
// once nothing will ever send on it again (the profile's limit).
var evictions = make(chan eviction)

// eviction asks the janitor to delete the entry id, and to close done then.
type eviction struct {
	id   string
	done chan<- struct{}
}

// janitor deletes the cache entries it is asked to, for ever.
func janitor() {
	for ev := range evictions {
		cache.Lock()
		delete(cache.m, ev.id)
		cache.Unlock()
		close(ev.done)
	}
}

func globalCache(env *Env) error {
	go janitor()
	var id string
	serve(env, func(ctx context.Context) {
		id = requestID(ctx)
		cache.Lock()
		cache.m[id] = ctx
		cache.Unlock()
		env.Phase("request-running")
		respond(ctx)
	})
	env.Phase("request-returned")
	done := make(chan struct{})
	evictions <- eviction{id: id, done: done}
	<-done
	env.Phase("entry-deleted")
	return nil
}

// requestState is per-request scratch state recycled through a sync.Pool.
type requestState struct {
	ctx  context.Context
	hits int
}

var statePool = sync.Pool{New: func() any { return new(requestState) }}

func syncPool(env *Env) error {
	serve(env, func(ctx context.Context) {
		st := statePool.Get().(*requestState)
		st.ctx = ctx
		work(st.ctx, 0, 1)
		st.hits++
		env.Phase("request-running")
		statePool.Put(st) // st.ctx is not cleared: the bug
	})
	env.Phase("request-returned")
	return nil
}

func pprofLabelValue(env *Env) error {
	gate := make(chan struct{})
	var wg sync.WaitGroup
	serve(env, func(ctx context.Context) {
		// The label value shares the payload's memory, as a string made
		// from a request body without copying would.
		body, _ := ctx.Value(payloadKey{}).([]byte)
		label := unsafe.String(&body[0], len(body))
		pprof.Do(ctx, pprof.Labels("body", label), func(context.Context) {
			startTasks(context.Background(), env.Tasks, gate, &wg)
		})
		env.Phase("request-running")
		respond(ctx)
	})
	env.Phase("request-returned")
	close(gate)
	wg.Wait()
	env.Phase("tasks-done")
	return nil
}
