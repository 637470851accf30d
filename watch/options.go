package watch

import (
	"log/slog"
	"time"
)

// Options configure a Watcher. The zero Options work: every zero field takes
// the default given with it.
type Options struct {
	// Grace is how long after its handler returns a request's context (or
	// after Track a value) may stay reachable. Default 10 s.
	Grace time.Duration
	// Threshold is how many values must have outlived Grace before a
	// report is made. Default 5.
	Threshold int
	// MinInterval is the least time between two reports. Default 10 min.
	MinInterval time.Duration
	// DumpDir keeps the heap dump of each report in this directory; when
	// empty, dumps go to a new temporary directory and are deleted once
	// analysed.
	DumpDir string
	// OnReport, when set, is called with each report, from the watcher's
	// own goroutine.
	OnReport func(Report)
	// Logger gets a one-line summary of each report. Default
	// slog.Default().
	Logger *slog.Logger
	// AllowRemote lets the Handler answer clients that are not on a
	// loopback address. Off by default: a heap dump holds every secret of
	// the process.
	AllowRemote bool
	// AllowHeapDump enables the Handler's raw dump endpoint, heapdump.
	// Off by default.
	AllowHeapDump bool
	// LeakInterval, when set, is how often the watcher takes Go 1.27's
	// goroutineleak profile (runtime/pprof) to count the goroutines the
	// runtime proves leaked (see CheckLeaks); each report's dump is then
	// followed by the profile too. A profile runs one extra GC cycle. Off
	// by default. On a Go before 1.27 the watcher logs once that the
	// profile is not available and goes on.
	LeakInterval time.Duration
	// LeakDump makes each leak check take a heap dump just before the
	// profile, while the process may be dumped, to say what the leaked
	// goroutines retain: a dump stops the world (about 0.3 s per 100 MiB
	// of heap). The first profile that finds leaked goroutines ends the
	// dumps of the process (see CheckLeaks).
	LeakDump bool
}

// Defaults of Options.
const (
	DefaultGrace       = 10 * time.Second
	DefaultThreshold   = 5
	DefaultMinInterval = 10 * time.Minute
)

// Limits that are not options.
const (
	// MaxLabels is how many distinct labels a Watcher counts apart; the
	// values of any further label count under "other".
	MaxLabels = 100
	// keptReports is how many reports a Watcher keeps for its Handler.
	keptReports = 5
	// maxReportValues is how many outlived values a report explains.
	maxReportValues = 20
)

// OtherLabel is the label of values whose own label came after MaxLabels
// others.
const OtherLabel = "other"

func (o Options) withDefaults() Options {
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Threshold <= 0 {
		o.Threshold = DefaultThreshold
	}
	if o.MinInterval <= 0 {
		o.MinInterval = DefaultMinInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// checkInterval is how often the watcher looks for new GC cycles: half
// the grace, between 10 ms and 5 s.
func (o Options) checkInterval() time.Duration {
	return min(max(o.Grace/2, 10*time.Millisecond), 5*time.Second)
}
