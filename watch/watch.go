package watch

import (
	"cmp"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"time"
	"unsafe"
	"weak"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/heapobj"
)

// ErrNotTrackable is wrapped by the error Track returns for a value the
// runtime could never report as freed (nil, zero-size, tiny, global...).
// It is retain.ErrNotTrackable too.
var ErrNotTrackable = heapobj.ErrNotTrackable

// A Watcher watches request contexts (Middleware) and other values (Track)
// that should become unreachable within Options.Grace, counts those that
// do not, and reports who holds them. Its methods may be called from
// several goroutines. Make one with New and stop it with Close.
type Watcher struct {
	opts Options

	mu       sync.Mutex
	labels   map[labelKey]*label
	order    []*label      // labels in order of first use
	pending  []expectation // values within their grace, or past it and waiting for GC cycles
	outlived []expectation // values that outlived their grace, while they stay alive
	newOut   int           // outlived values not yet in a report
	lastRep  time.Time     // time of the last report
	reports  []Report      // the last keptReports reports, oldest first
	nreports int           // reports made
	cycles   uint64        // GC cycles seen at the last check
	forced   int           // GCs the watcher forced

	leakState  string     // Stats.LeakProfile
	leakChecks int        // goroutineleak profiles taken
	lastLeak   *LeakCheck // the last of them, or nil
	leakBytes  uint64     // RetainedBytes of the last with a dump

	busy chan struct{} // holds a token while a dump is written or analysed
	// bin is the running executable, opened on first use, with the busy token.
	bin     *binsym.Binary
	binDone bool

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// expectation is a value that should become unreachable.
type expectation struct {
	wp    weak.Pointer[byte]
	addr  uintptr // the object's address, a plain number
	typ   reflect.Type
	label *label
	site  uintptr // PC of the Track call, 0 for a request context
	due   int64   // UnixNano when the grace ends
	// cycle is the GC cycle count at the first check after due, 0 before.
	// The value outlived its grace if it is alive once two more cycles
	// have completed: the second of them started after that check.
	cycle uint64
}

// New returns a Watcher with the options o and starts its checking
// goroutine.
func New(o Options) *Watcher {
	w := &Watcher{
		opts:   o.withDefaults(),
		labels: make(map[labelKey]*label),
		busy:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	w.cycles = gcCycles()
	if o.LeakInterval > 0 && leakProfile() == nil {
		w.noLeakProfile()
	}
	publish(w)
	go w.run()
	return w
}

// Close stops the watcher's goroutine and waits for it, and for a report
// being made, to finish. The counts stay readable.
func (w *Watcher) Close() error {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	unpublish(w)
	w.busy <- struct{}{} // wait for a dump the Handler is taking
	defer func() { <-w.busy }()
	if w.bin != nil {
		err := w.bin.Close()
		w.bin, w.binDone = nil, true
		return err
	}
	return nil
}

// Track expects the heap object behind v (a pointer, slice, string, map,
// channel or func) to be unreachable within Options.Grace from now; label
// names it in the counts and reports. Track keeps no reference to v. A
// value the runtime could never report freed is refused with an error
// wrapping ErrNotTrackable.
func (w *Watcher) Track(v any, label string) error {
	o, reason := heapobj.Of(v)
	if reason != "" {
		if o.Type != nil {
			return fmt.Errorf("watch: cannot track %q (%s): %s: %w", label, o.Type, reason, ErrNotTrackable)
		}
		return fmt.Errorf("watch: cannot track %q: %s: %w", label, reason, ErrNotTrackable)
	}
	var pc [1]uintptr
	runtime.Callers(2, pc[:])
	e := expectation{
		wp:   weak.Make((*byte)(o.Ptr)),
		addr: uintptr(o.Ptr),
		typ:  o.Type,
		site: pc[0],
		due:  time.Now().Add(w.opts.Grace).UnixNano(),
	}
	runtime.KeepAlive(v)
	w.mu.Lock()
	e.label = w.labelLocked(labelKey{name: label})
	e.label.watched++
	w.pending = append(w.pending, e)
	w.mu.Unlock()
	return nil
}

// expectContext expects the context ctx to be unreachable within the grace.
// It does nothing for a context that is not a pointer (context.Background
// and the like live forever).
func (w *Watcher) expectContext(ctx any, key labelKey) {
	typ := reflect.TypeOf(ctx)
	if typ == nil || typ.Kind() != reflect.Pointer {
		return
	}
	p := (*[2]unsafe.Pointer)(unsafe.Pointer(&ctx))[1]
	e := expectation{
		wp:   weak.Make((*byte)(p)),
		addr: uintptr(p),
		typ:  typ,
		due:  time.Now().Add(w.opts.Grace).UnixNano(),
	}
	w.mu.Lock()
	e.label = w.labelLocked(key)
	e.label.watched++
	w.pending = append(w.pending, e)
	w.mu.Unlock()
}

// Stats are the counts of a Watcher.
type Stats struct {
	// Watched counts the values expected to become unreachable, Outlived
	// those found alive after their grace, Alive those of them still
	// alive at the last check.
	Watched  uint64 `json:"watched_count"`
	Outlived uint64 `json:"outlived_count"`
	Alive    int    `json:"alive_count"`
	// Pending counts the values within their grace or waiting for GC
	// cycles to tell.
	Pending int `json:"pending_count"`
	// Reports counts the reports made.
	Reports int `json:"reports_count"`
	// GCCycles is the GC cycle count at the last check; ForcedGCs counts
	// the cycles the watcher started itself.
	GCCycles  uint64 `json:"gc_count"`
	ForcedGCs int    `json:"forced_gc_count"`
	// LeakProfile is LeakProfileOff until a leak check is asked for
	// (Options.LeakInterval, CheckLeaks), then LeakProfileOn, or
	// LeakProfileUnavailable on a Go before 1.27. LeakChecks counts the
	// goroutineleak profiles taken; LeakedGoroutines is the last one's
	// count of goroutines proven leaked, LeakedRetainedBytes what they
	// retained at the last check that had a heap dump (0 before one: after
	// the first profile that finds leaks, the process cannot be dumped).
	LeakProfile         string `json:"leak_profile"`
	LeakChecks          int    `json:"leak_check_count"`
	LeakedGoroutines    int    `json:"leaked_goroutine_count"`
	LeakedRetainedBytes uint64 `json:"leaked_retained_bytes"`
	// Labels are the counts per label, in order of first use.
	Labels []LabelStats `json:"labels"`
}

// LabelStats are the counts of one label.
type LabelStats struct {
	Label    string `json:"label"`
	Watched  uint64 `json:"watched_count"`
	Outlived uint64 `json:"outlived_count"`
	Alive    int    `json:"alive_count"`
}

// Stats returns the counts now.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := Stats{
		Alive:     len(w.outlived),
		Pending:   len(w.pending),
		Reports:   w.nreports,
		GCCycles:  w.cycles,
		ForcedGCs: w.forced,

		LeakProfile: cmp.Or(w.leakState, LeakProfileOff),
		LeakChecks:  w.leakChecks,
		Labels:      make([]LabelStats, 0, len(w.order)),
	}
	if w.lastLeak != nil {
		st.LeakedGoroutines, st.LeakedRetainedBytes = w.lastLeak.Count, w.leakBytes
	}
	alive := make(map[*label]int)
	for _, e := range w.outlived {
		alive[e.label]++
	}
	for _, l := range w.order {
		st.Watched += l.watched
		st.Outlived += l.outlived
		st.Labels = append(st.Labels, LabelStats{Label: l.name, Watched: l.watched, Outlived: l.outlived, Alive: alive[l]})
	}
	return st
}

// Label returns the counts of the label name, zero if it has none.
func (s Stats) Label(name string) LabelStats {
	for _, l := range s.Labels {
		if l.Label == name {
			return l
		}
	}
	return LabelStats{Label: name}
}
