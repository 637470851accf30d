package heap

import "github.com/ctxleak/ctxleak/heapdump"

// Progress is one report of Analyze's progress, for a status line: a dump
// of a few gigabytes takes seconds to read and analyse.
type Progress struct {
	// Phase is PhaseRead, PhaseGraph or PhaseDominators.
	Phase string
	// Done and Total are the bytes of the dump read and its size, for
	// PhaseRead.
	Done, Total int64
}

// The phases of Analyze, in order.
const (
	PhaseRead       = "read"       // reading the dump's records
	PhaseGraph      = "graph"      // building the object graph
	PhaseDominators = "dominators" // computing the dominator tree and retained sizes
)

// OnProgress has Analyze call report as it reads the dump (about every 1%
// of its bytes) and as it starts each later phase. report is called one
// call at a time, from Analyze's goroutine or, while the dump is read,
// from the reader's. It is an option of Analyze.
func OnProgress(report func(Progress)) Option {
	return Option{func(o *options) { o.progress = report }}
}

// withProgress returns lo with report called as the dump is read, and
// once it has been.
func withProgress(lo heapdump.Options, report func(Progress)) heapdump.Options {
	var done, total int64
	lo.Progress = func(read, size int64) {
		done, total = read, size
		report(Progress{Phase: PhaseRead, Done: read, Total: size})
	}
	prepare := lo.Prepare
	lo.Prepare = func(d *heapdump.Dump) error {
		if done < total { // the reports come every 1% or so
			report(Progress{Phase: PhaseRead, Done: total, Total: total})
		}
		report(Progress{Phase: PhaseGraph})
		if prepare != nil {
			return prepare(d)
		}
		return nil
	}
	return lo
}
