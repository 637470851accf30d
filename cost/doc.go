// Package cost measures what carrying a request context costs in Go, and
// is the manual of "ctxleak cost".
//
// # Rows
//
// Each row is a Measurement of one of three kinds:
//
//   - Op: the time and allocations of one operation, by testing.Benchmark:
//     "argument" (a request ID passed as a function argument: the baseline
//     the others are judged against), "with-value", ctx.Value found at
//     depth 1, 10 and 100 and missing below 100 layers, WithCancel,
//     WithTimeout and AfterFunc each undone at once, WithoutCancel,
//     pprof.Do with one label, a goroutine started with and without a
//     context and waited for, and an slog call with a context.
//     Figures: ns_per_op, bytes_per_op, allocs_per_op.
//   - Pending: the memory each pending operation holds, from
//     runtime/metrics after a full GC, over Settings.Pending items pending
//     at once (100,000 by default): a goroutine blocked on <-ctx.Done(), a
//     pending WithTimeout, a pending context.AfterFunc, a time.AfterFunc
//     whose closure captures the context, and an in-flight net/http request
//     with a value in its context (at most MaxPendingConns: each is a TCP
//     connection whose two ends are in the same process and both counted).
//     Figures: bytes_per_pending (heap objects), stack_bytes_per_pending
//     (goroutine stacks, counted apart), to a tenth of a byte.
//   - Server: a net/http server on 127.0.0.1 driven by vegeta (as a
//     library, in the same process) over Connections connections for
//     Settings.LoadTime, each connection sending its next request when the
//     last is answered, for a handler that gets its values as arguments,
//     one that reads them with ctx.Value 12 times, and one behind a chain
//     of 5 WithValue middlewares. The handlers of a child take turns in
//     slices of 100ms. Figures: requests_per_second,
//     throughput_vs_arguments_ratio (over the arguments handler's, in the
//     same child: the machine's pace cancels out), latency_p50_ns,
//     latency_p99_ns.
//
// # Runs and statistics
//
// A Runner measures every row Count times (at least MinCount, 10 by
// default), interleaved: run i measures every row once before run i+1
// starts, in child processes of its own: one for all the Op rows, one per
// Pending row, one for all the Server rows. So every sample of a row comes
// from another process: a process's code and data placement moves its
// timings (a row can be bimodal across processes), and the interval then
// spans those modes rather than one. Each figure is reported as the
// median of its samples with the 95% confidence interval of the median,
// computed by golang.org/x/perf/benchmath (AssumeNothing), as benchstat
// does.
//
// Across runs, such an interval holds the other runs' medians only now
// and then: with 6 to 24 samples of a figure that varies, a 95% interval
// of the median holds both other runs' medians in 55-70% of figures even
// when the runs differ by sampling alone. bench/coststable counts both
// that and whether the runs' intervals share a point (over 99% of figures
// when nothing else differs).
//
// The child side is RunChild (or Measure): "ctxleak __cost NAME..." calls
// it and writes one JSON line per row.
//
// # Other runtimes
//
// The figures Node, Bun and Python published for the same questions are
// data (Seed): the text output prints each beside the Go row it compares
// with, marked "elsewhere", saying whether the two measure the same thing.
// They are never measured here.
//
// # Output
//
// Report.WriteText writes a table per kind; Report.WriteJSON writes one
// document with "schema": "ctxleak.cost/v2", the Go version, GOMAXPROCS,
// the settings, and a list of rows, each with its figures keyed by name
// (the unit in the key), each figure its median, low, high and samples.
// ReadJSON reads it back.
//
// # Regressions
//
// Compare judges the timings (ns_per_op, requests_per_second,
// latency_p50_ns) of a run against a base run, benchstat's rule: a figure
// is Slower when the Mann-Whitney U test says the samples differ
// (p < 0.05) and the new median is worse than the base's whole interval.
// "ctxleak cost --base FILE.json" exits 1 when any is.
package cost
