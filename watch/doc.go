// Package watch catches, in a running service, request contexts that
// outlive their request, and says who holds them.
//
// Every request's context should become unreachable soon after its handler
// returns. The Watcher's Middleware watches the context of each request
// through a weak pointer; Track watches any other value. A value still
// alive Options.Grace after its handler returned (or after Track), once
// two GC cycles have run since, has outlived its grace: it is counted per
// label (Stats, the expvar variable "ctxleak", package watchprom). When
// Options.Threshold values have outlived their grace, and at most once per
// Options.MinInterval, the watcher writes a heap dump of the process (mode
// 0600, in a temporary directory), analyses it in the process with package
// heap and the running executable, and makes a Report: for each value still
// alive, the root that holds it (a goroutine's frame, with the goroutine's
// function and creation site; a global; a timer) and the typed path from
// it. The report is logged in one line with slog, passed to
// Options.OnReport, kept for the Handler (the last 5), and the dump is
// deleted unless Options.DumpDir keeps it.
//
//	w := watch.New(watch.Options{})
//	srv := &http.Server{Handler: w.Middleware(mux)}
//	adminMux.Handle("/debug/ctxleak/", w.Handler())
//	defer w.Close()
//
// Checking runs in one goroutine per Watcher and rides on the garbage
// collector's own cycles (runtime/metrics /gc/cycles/total:gc-cycles):
// nothing runs a GC on the request path. When values are past their grace
// and no GC has run since the previous check, the watcher forces one, at
// most once per check interval (half the grace, between 10 ms and 5 s).
//
// A value within its grace costs about 100 bytes (its expectation and the
// runtime's weak handle): at 10,000 requests a second and the default grace
// of 10 s, about 10 MiB.
//
// A heap dump stops the world while it is written, about 0.3 s per 100 MiB
// of heap, and holds every secret of the process: the Handler answers
// loopback clients only unless Options.AllowRemote is set, belongs behind
// the service's admin authentication, and serves the raw dump only with
// Options.AllowHeapDump.
//
// On Go 1.27 and later, once a goroutineleak profile (runtime/pprof) has
// marked goroutines of the process leaked, a heap dump would kill it: the
// endpoints that dump answer 409 Conflict with the reason, and reports carry
// it as their error, for the rest of the process's life.
//
// With Options.LeakInterval the watcher takes that profile itself, on its
// own schedule and just after each report's dump (CheckLeaks takes it at
// once): the goroutines the runtime proves leaked, blocked for ever on
// channels or locks nothing runnable reaches, are counted in Stats, the
// expvar variable, watchprom's metrics, reports and a log line, grouped by
// function and creation site. Each profile costs one extra GC cycle. With
// Options.LeakDump a check dumps the heap first, while the process may be
// dumped, and says what the leaked goroutines alone retain, matched by
// goroutine id; the first check that finds leaks is the process's last
// dump. On a Go before 1.27 the watcher logs once that the profile is not
// available and goes on.
//
// The files: options.go (Options, defaults and limits), watch.go (the
// Watcher, Track, Stats), middleware.go (the middleware and its labels),
// check.go (the checking goroutine), report.go (reports), leaks.go (leak
// checks), handler.go (the HTTP endpoints), expvar.go (the expvar
// variable).
package watch
