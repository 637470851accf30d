package cost

import (
	"context"
	"io"
	"log/slog"
	"runtime/pprof"
	"sync"
	"time"
)

// ctxKey is the type of the context keys the measurements use.
type ctxKey int

// requestIDKey is the key of the request ID in every request context.
const requestIDKey ctxKey = -1

// requestID is the value the measurements carry, as a context value or as
// an argument.
const requestID = "req-7f3a9c"

// liveCancels keeps the request contexts' cancel functions: they live as
// long as the child process.
var liveCancels []context.CancelFunc

// sink keeps results alive so the compiler cannot drop the work.
var sink int

// requestContext returns a cancelable context carrying the request ID, as
// a net/http handler's context would be: the parent of every operation.
func requestContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	liveCancels = append(liveCancels, cancel) // lives as long as the child
	return context.WithValue(ctx, requestIDKey, requestID)
}

// chain returns the request context below depth WithValue layers, each
// with a key of its own: ctxKey(0) is in the innermost layer, found after
// walking all depth layers.
func chain(depth int) context.Context {
	ctx := requestContext()
	for i := range depth {
		ctx = context.WithValue(ctx, ctxKey(i), i)
	}
	return ctx
}

//go:noinline
func handleArg(id string) int { return len(id) }

//go:noinline
func handleCtx(ctx context.Context, key any) int {
	if v, ok := ctx.Value(key).(int); ok {
		return v + 1
	}
	return 0
}

func opArgument() func() {
	return func() { sink += handleArg(requestID) }
}

func opWithValue() func() {
	ctx := requestContext()
	return func() {
		c := context.WithValue(ctx, ctxKey(1), 1)
		sink += handleCtx(c, ctxKey(1))
	}
}

// opValueAt looks up the key found depth layers down a chain of depth
// WithValue layers (depth 1 is the outermost layer).
func opValueAt(depth int) func() func() {
	return func() func() {
		ctx := chain(depth)
		return func() { sink += handleCtx(ctx, ctxKey(0)) }
	}
}

func opValueMissing() func() {
	ctx := chain(100)
	return func() { sink += handleCtx(ctx, ctxKey(-2)) }
}

func opWithCancel() func() {
	ctx := requestContext()
	return func() {
		c, cancel := context.WithCancel(ctx)
		cancel()
		sink += len(c.Err().Error())
	}
}

func opWithTimeout() func() {
	ctx := requestContext()
	return func() {
		c, cancel := context.WithTimeout(ctx, time.Minute)
		cancel()
		sink += len(c.Err().Error())
	}
}

func opAfterFunc() func() {
	ctx := requestContext()
	f := func() { sink++ }
	return func() {
		stop := context.AfterFunc(ctx, f)
		if stop() {
			sink++
		}
	}
}

func opWithoutCancel() func() {
	ctx := requestContext()
	return func() {
		c := context.WithoutCancel(ctx)
		sink += handleCtx(c, ctxKey(1))
	}
}

func opPprofDo() func() {
	ctx := requestContext()
	labels := pprof.Labels("route", "/orders")
	f := func(context.Context) { sink++ }
	return func() { pprof.Do(ctx, labels, f) }
}

func opGoWithContext() func() {
	ctx := requestContext()
	var wg sync.WaitGroup
	return func() {
		wg.Add(1)
		go func(ctx context.Context) {
			if ctx.Err() == nil {
				wg.Done()
			}
		}(ctx)
		wg.Wait()
	}
}

func opGoWithoutContext() func() {
	var wg sync.WaitGroup
	return func() {
		wg.Add(1)
		go func() { wg.Done() }()
		wg.Wait()
	}
}

func opSlogContext() func() {
	ctx := requestContext()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	return func() { logger.InfoContext(ctx, "request done", "status", 200) }
}
