package main

// Patterns whose holders are runtime records rather than frames or globals:
// defer records, timers, and a global map seen without the binary.
//   - defers N: one goroutine in main.loop with N pending `defer cancel()`
//     of contexts made by context.WithTimeout (an hour), each over a
//     context with a 512-byte value: the defers and the timers hold them;
//   - cleandefers N: the same loop, each context cancelled at once and
//     each defer capturing only its index: nothing worth a report;
//   - timers N: N contexts made by context.WithTimeout (an hour), each
//     over a 512-byte value, never cancelled: only their timers hold them;
//   - idletimer N: a 2 MiB payload that a goroutine in main.serve holds
//     and an idle timer's closure (time.AfterFunc, an hour) holds too;
//     the payload's address is printed;
//   - globalmap N: N values of 1 MiB in one global map, main.cache;
//   - globalarray N: N (at most 40) values of 1 MiB in one global array of
//     pointers, main.buffers.
//   - panics N: one goroutine in main.recoverer that panics with a value
//     holding a 2 MiB payload, and blocks in a deferred call while the
//     panic is in progress; the payload's address is printed.

import (
	"context"
	"runtime"
	"time"
	"unsafe"
)

// defersValue is the size of each deferred or timed context's value.
const defersValue = 512

func init() {
	patterns["defers"] = func(n int, res *result) { startLoop(n, false) }
	patterns["cleandefers"] = func(n int, res *result) { startLoop(n, true) }
	patterns["timers"] = func(n int, _ *result) {
		for range n {
			ctx := context.WithValue(context.Background(), ctxKey{}, make([]byte, defersValue))
			_, cancel := context.WithTimeout(ctx, time.Hour)
			_ = cancel // never called: the leak under test
		}
	}
	patterns["idletimer"] = func(_ int, res *result) {
		payload := make([]byte, 2<<20)
		res.PayloadAddr = addrOf(payload)
		idleTimer = time.AfterFunc(time.Hour, func() { sinkBytes = payload })
		ready := make(chan struct{})
		go serve(payload, ready)
		<-ready
		waitParked("main.serve", 1)
		idleTimer = nil // only the runtime's timer heap holds it now
	}
	patterns["globalmap"] = func(n int, _ *result) {
		cache = map[int][]byte{}
		for i := range n {
			cache[i] = make([]byte, 1<<20)
		}
	}
	patterns["globalarray"] = func(n int, _ *result) {
		for i := range min(n, len(buffers)) {
			buffers[i] = new([1 << 20]byte)
		}
	}
	patterns["panics"] = func(_ int, res *result) {
		payload := make([]byte, 2<<20)
		res.PayloadAddr = addrOf(payload)
		ready := make(chan struct{})
		go recoverer(&panicValue{payload: payload}, ready)
		<-ready
		waitParked("main.stuckInDefer", 1)
	}
}

var (
	idleTimer *time.Timer
	sinkBytes []byte
	cache     map[int][]byte
	buffers   [40]*[1 << 20]byte
)

func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

// startLoop starts main.loop with n defers and waits until it is parked.
func startLoop(n int, clean bool) {
	ready := make(chan struct{})
	go loop(n, clean, ready)
	<-ready
	waitParked("main.loop", 1)
}

// loop defers n calls in a loop, then blocks. Unless clean, each defers
// the cancel of a timed context holding a value.
//
//go:noinline
func loop(n int, clean bool, ready chan<- struct{}) {
	for i := range n {
		if clean {
			_, cancel := context.WithTimeout(context.Background(), time.Hour)
			cancel()
			defer noop(i)
			continue
		}
		ctx := context.WithValue(context.Background(), ctxKey{}, make([]byte, defersValue))
		_, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
	}
	ready <- struct{}{}
	<-release
}

//go:noinline
func noop(int) {}

// serve holds payload across a receive that never completes.
//
//go:noinline
func serve(payload []byte, ready chan<- struct{}) {
	ready <- struct{}{}
	<-release
	sinkBytes = payload
}

// panicValue is what recoverer panics with.
type panicValue struct{ payload []byte }

// recoverer panics with v; its deferred call blocks while the panic is in
// progress, so the dump has a panic record.
//
//go:noinline
func recoverer(v *panicValue, ready chan<- struct{}) {
	defer func() { recover() }()
	defer stuckInDefer(ready)
	panic(v)
}

// stuckInDefer blocks until release is closed.
//
//go:noinline
func stuckInDefer(ready chan<- struct{}) {
	ready <- struct{}{}
	<-release
	runtime.Gosched()
}
