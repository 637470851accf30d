package watch

import (
	"runtime"
	"runtime/metrics"
	"time"
	"weak"
)

// The checking goroutine rides on the garbage collector's own cycles. Every
// check interval (half the grace, between 10 ms and 5 s) it reads the GC
// cycle count (runtime/metrics /gc/cycles/total:gc-cycles) and sorts the
// values past their grace: a value found alive once two GC cycles have
// completed since the first check after its grace ended (the second of them
// started after that check, so it saw the value as it is now) has outlived
// its grace. When values wait for cycles and no GC has run since the last
// check, the watcher forces one with runtime.GC: at most one per check
// interval, and none while the service's own allocation keeps the GC busy.
// Nothing runs on the request path but a weak.Make and an append.

const gcCyclesMetric = "/gc/cycles/total:gc-cycles"

// gcCycles returns the number of completed GC cycles.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: gcCyclesMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// run is the watcher's goroutine.
func (w *Watcher) run() {
	defer close(w.done)
	t := time.NewTicker(w.opts.checkInterval())
	defer t.Stop()
	var leakTick <-chan time.Time
	if w.opts.LeakInterval > 0 && leakProfile() != nil {
		lt := time.NewTicker(w.opts.LeakInterval)
		defer lt.Stop()
		leakTick = lt.C
	}
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			if w.check(time.Now()) {
				w.report()
			}
		case <-leakTick:
			w.CheckLeaks()
		}
	}
}

// check sorts the pending values as of now (see above), forces a GC when
// it must, and reports whether a report is due.
func (w *Watcher) check(now time.Time) (reportDue bool) {
	cycles := gcCycles()
	w.mu.Lock()
	gcRan := cycles != w.cycles
	w.cycles = cycles
	pending := w.pending
	w.pending = nil
	w.mu.Unlock()

	// Sort the pending values outside the lock: requests keep coming.
	var outlived []expectation
	waiting := false
	kept := pending[:0]
	for _, e := range pending {
		switch {
		case !isAlive(e.wp):
			continue
		case now.UnixNano() < e.due:
		case e.cycle == 0:
			e.cycle = cycles + 1 // stored plus one: 0 means unset
			waiting = true
		case cycles+1 >= e.cycle+2:
			outlived = append(outlived, e)
			continue
		default:
			waiting = true
		}
		kept = append(kept, e)
	}
	clear(pending[len(kept):])

	w.mu.Lock()
	w.pending = append(kept, w.pending...)
	alive := w.outlived[:0]
	for _, e := range w.outlived {
		if isAlive(e.wp) {
			alive = append(alive, e)
		}
	}
	clear(w.outlived[len(alive):])
	w.outlived = alive
	for _, e := range outlived {
		e.label.outlived++
		w.outlived = append(w.outlived, e)
	}
	w.newOut += len(outlived)
	reportDue = w.newOut >= w.opts.Threshold && len(w.outlived) > 0 &&
		(w.lastRep.IsZero() || now.Sub(w.lastRep) >= w.opts.MinInterval)
	if waiting && !gcRan {
		w.forced++
	}
	w.mu.Unlock()

	if waiting && !gcRan {
		runtime.GC()
	}
	return reportDue
}

// isAlive is not inlined so that the strong pointer Value returns dies with
// its frame and is never left in the caller's.
//
//go:noinline
func isAlive(wp weak.Pointer[byte]) bool {
	return wp.Value() != nil
}
