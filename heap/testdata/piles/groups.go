package main

import (
	"context"
	"fmt"
	"time"
)

// Patterns of what piles up inside one holding, and of objects no single
// root holds:
//   - afterfunc N: N context.AfterFunc registrations never stopped, each
//     with a 512-byte buffer, under the long-lived context main.longLived;
//   - series N: N series of a metrics vector held by main.vec, a map from
//     label values to a series with a 256-byte histogram;
//   - timeouts N: N pending WithTimeout contexts never cancelled, each
//     under a context with a 512-byte value under the long-lived context
//     main.longLived: its children map and the runtime's timers both
//     reach each;
//   - slice N: N entries of 256 bytes in the global slice main.entries;
//   - shared3 N: N buffers of 1 KiB, each in three global slices,
//     main.red, main.green and main.blue, and N more in main.red and
//     main.green only.
func init() {
	patterns["afterfunc"] = afterFuncs
	patterns["series"] = seriesPile
	patterns["timeouts"] = timeouts
	patterns["shared3"] = shared3
	patterns["slice"] = slicePile
}

// longLived is a context that is never cancelled before the dump;
// stopAll would cancel it.
var (
	longLived context.Context
	stopAll   context.CancelFunc
)

// register adds an AfterFunc that uses buf under ctx.
//
//go:noinline
func register(ctx context.Context, buf []byte) func() bool {
	return context.AfterFunc(ctx, func() { used(context.WithValue(ctx, ctxKey{}, buf)) })
}

func afterFuncs(n int, _ *result) {
	longLived, stopAll = context.WithCancel(context.Background())
	for range n {
		drop(register(longLived, make([]byte, 512)))
	}
}

// series is one series of a metrics vector.
type series struct {
	labels    []string
	count     uint64
	histogram [32]float64
}

// metricVec is a metrics vector: series by their label values.
type metricVec struct {
	name   string
	series map[string]*series
}

var vec *metricVec

// observe adds the series of the label values, when new.
//
//go:noinline
func observe(v *metricVec, path string, code int) {
	key := fmt.Sprintf("%s|%d", path, code)
	if _, ok := v.series[key]; !ok {
		v.series[key] = &series{labels: []string{path, fmt.Sprint(code)}}
	}
	v.series[key].count++
}

func seriesPile(n int, _ *result) {
	vec = &metricVec{name: "requests", series: map[string]*series{}}
	for i := range n {
		observe(vec, fmt.Sprintf("/item/%d", i), 200)
	}
}

// drop forgets what it is given: a stop or cancel function never called.
//
//go:noinline
func drop(any) {}

// withTimeout starts a timeout under ctx that carries a value.
//
//go:noinline
func withTimeout(ctx context.Context) context.CancelFunc {
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, ctxKey{}, make([]byte, 512)), time.Hour)
	_ = ctx
	return cancel
}

func timeouts(n int, _ *result) {
	longLived, stopAll = context.WithCancel(context.Background())
	for range n {
		drop(withTimeout(longLived))
	}
}

var red, green, blue []*[1024]byte

func shared3(n int, _ *result) {
	for range n {
		b := new([1024]byte)
		red, green, blue = append(red, b), append(green, b), append(blue, b)
		c := new([1024]byte)
		red, green = append(red, c), append(green, c)
	}
}

// entry is an entry of a slice that only grows.
type entry struct {
	id   int
	data [31]uint64
}

var entries []*entry

// addEntry appends an entry to main.entries.
//
//go:noinline
func addEntry(id int) {
	entries = append(entries, &entry{id: id})
}

func slicePile(n int, _ *result) {
	for i := range n {
		addEntry(i)
	}
}
