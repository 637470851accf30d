//go:build pilesreal

package main

// Patterns of realworld.go whose holders are one mechanism seen from
// several roots:
//   - rw-deferloop N: one goroutine in main.parse, a loop that never
//     returns and defers the cancel of a WithTimeout context each time
//     round: N pending defers, each with the timer of its context;
//   - rw-deferloopmixed N: one goroutine in main.parseMixed, a loop that
//     never returns and defers, each time round, the cancel of a
//     WithCancel context under main.serverCtx (no timer: not one
//     mechanism) and a call that uses a buffer of 64 bytes: 2N pending
//     defers of one frame, one group as ever;
//   - rw-errgroupctx N: an errgroup.WithContext under the global
//     main.serverCtx, never cancelled (its Wait is never called), whose
//     context carries a request body of N*4 KiB, with N tasks in
//     main.upload blocked: serverCtx's children map keeps the group's
//     context for the life of the process, and so do the tasks.

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"
)

func init() {
	patterns["rw-deferloop"] = func(n int, _ *result) {
		ready := make(chan struct{})
		go parse(context.WithValue(context.Background(), ctxKey{}, "stream"), n, ready)
		<-ready
		waitBlocked("main.parse", "[chan receive", 1)
	}
	patterns["rw-deferloopmixed"] = func(n int, _ *result) {
		serverCtx, stopServer = context.WithCancel(context.Background())
		ready := make(chan struct{})
		go parseMixed(n, ready)
		<-ready
		waitBlocked("main.parseMixed", "[chan receive", 1)
	}
	patterns["rw-errgroupctx"] = func(n int, _ *result) {
		serverCtx, stopServer = context.WithCancel(context.Background())
		handleUpload(make([]byte, n*itemSize), n)
		waitBlocked("main.upload", "[chan receive", n)
	}
}

// parse reads records for ever, each under a timeout whose cancel it
// defers: a deferred call runs when the function returns, which a loop
// that never ends never does.
//
//go:noinline
func parse(ctx context.Context, records int, ready chan<- struct{}) {
	for i := 0; ; i++ {
		c, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		used(c)
		if i+1 == records { // the stream has no more for now
			ready <- struct{}{}
			<-release
		}
	}
}

// parseMixed is parse with a WithCancel context under main.serverCtx,
// whose children map holds it too, and a second defer of a buffer.
//
//go:noinline
func parseMixed(records int, ready chan<- struct{}) {
	for i := 0; ; i++ {
		c, cancel := context.WithCancel(serverCtx)
		defer cancel()
		buf := make([]byte, 64)
		defer drop(buf)
		used(c)
		if i+1 == records {
			ready <- struct{}{}
			<-release
		}
	}
}

// handleUpload starts the upload of body in parts and returns without
// waiting for them (the bug): the group's context is never cancelled.
//
//go:noinline
func handleUpload(body []byte, parts int) {
	ctx := context.WithValue(serverCtx, ctxKey{}, body)
	g, gctx := errgroup.WithContext(ctx)
	for p := range parts {
		g.Go(func() error { return upload(gctx, p) })
	}
}

// upload sends one part of the request body in ctx; it blocks for ever.
//
//go:noinline
func upload(ctx context.Context, part int) error {
	<-release
	used(ctx)
	_ = part
	return nil
}
