package retain

import (
	"context"
	"reflect"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/heapobj"
	"github.com/ctxleak/ctxleak/internal/leakedg"
)

// TB is the part of testing.TB a Tracker uses; *testing.T and *testing.B
// satisfy it.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Name() string
}

// Tracked describes a value handed to Track. It holds no pointer to the
// value: Addr is a plain number.
type Tracked struct {
	Label string       // the label given to Track
	Type  string       // the Go type of the value given to Track, such as "[]uint8" or "*http.Request"
	Kind  reflect.Kind // Pointer, Slice, String, Map, Chan or Func
	// Addr is the address of the tracked heap object: the pointed-to value,
	// the first element of a slice, the first byte of a string, the
	// runtime's header of a map or channel, or the closure of a func. For an
	// interior pointer it is inside the allocation, not at its start.
	Addr uintptr
	// Size is how many bytes from Addr are known to belong to the value:
	// the size of the pointed-to type, cap*elem for a slice, len for a
	// string. It is 0 for maps, channels and funcs, whose allocation size is
	// private to the runtime (a heap dump has it).
	Size uintptr
	Site string // file:line of the Track call
}

// A Tracker watches values that should be freed and reports those that are
// not. Its methods may be called from several goroutines.
type Tracker struct {
	tb   TB // nil for NewTracker
	name string
	opts options

	mu   sync.Mutex
	objs []*object

	// before are the ids of the goroutines running at New, with
	// CheckGoroutines.
	before map[uint64]bool
}

type object struct {
	Tracked
	wp      weak.Pointer[byte]
	callers [1]uintptr
}

// New returns a Tracker for a test. Refused values and values still alive
// at AssertReleased fail t.
func New(t TB, opts ...Option) *Tracker {
	t.Helper()
	tr := &Tracker{tb: t, name: t.Name(), opts: buildOptions(opts)}
	if tr.opts.checkGoroutines {
		tr.before = leakedg.IDs()
	}
	return tr
}

// NewTracker returns a Tracker for a program that is not a test: Track only
// returns errors, and Released and Report take the place of AssertReleased.
func NewTracker(opts ...Option) *Tracker {
	return &Tracker{name: "ctxleak", opts: buildOptions(opts)}
}

// Track starts watching the heap object behind v, a pointer, slice, string,
// map, channel or func; label names it in reports. Track keeps no strong
// reference to v.
//
// Values the runtime could never report as freed are refused (see the
// package documentation) with an error wrapping ErrNotTrackable; with a
// Tracker made by New the refusal also fails the test.
func (tr *Tracker) Track(v any, label string) error {
	tg, reason := heapobj.Of(v)
	if reason != "" {
		r := &refusal{label: label, reason: reason}
		if tg.Type != nil {
			r.typ = tg.Type.String()
		}
		if tr.tb != nil {
			tr.tb.Helper()
			tr.tb.Errorf("%v", r)
		}
		return r
	}
	o := &object{
		Tracked: Tracked{
			Label: label,
			Type:  tg.Type.String(),
			Kind:  tg.Type.Kind(),
			Addr:  uintptr(tg.Ptr),
			Size:  tg.Size,
		},
		wp: weak.Make((*byte)(tg.Ptr)),
	}
	runtime.Callers(2, o.callers[:])
	runtime.KeepAlive(v)

	tr.mu.Lock()
	tr.objs = append(tr.objs, o)
	tr.mu.Unlock()
	return nil
}

// Released collects garbage and checks, with back-off, until every tracked
// value is freed, the Tracker's timeout passes, or ctx is done, whichever
// comes first. It returns the values still alive then (nil when all were
// freed) and never fails a test. err is ctx.Err() when ctx ended the wait,
// in which case some values may have been freed had it waited longer.
//
// Freed values are forgotten; those still alive stay tracked.
func (tr *Tracker) Released(ctx context.Context) (alive []Tracked, err error) {
	alive, _, err = tr.wait(ctx)
	return alive, err
}

// AssertReleased is Released for tests: it fails the test, with a report and
// a heap dump, if any tracked value is still alive after the timeout. It
// reports whether everything was freed. With [CheckGoroutines] it also
// fails the test for goroutines proven leaked.
func (tr *Tracker) AssertReleased() bool {
	if tr.tb == nil {
		panic("retain: AssertReleased needs a Tracker made by New; use Released")
	}
	tr.tb.Helper()
	alive, st, _ := tr.wait(context.Background())
	if tr.opts.checkGoroutines {
		return tr.assertGoroutines(alive, st)
	}
	if len(alive) == 0 {
		return true
	}
	tr.tb.Errorf("%s", tr.report(alive, st))
	return false
}

// Report writes a heap dump (unless NoDump) and returns the report that
// AssertReleased would fail a test with, for values Released returned.
func (tr *Tracker) Report(alive []Tracked) string {
	return tr.report(alive, waitStats{})
}

// waitStats says how long a check waited, for the report.
type waitStats struct {
	waited time.Duration
	gcs    int
	total  int // values tracked when the check began
}

// Back-off between checks: the first GC runs at once, then the waits double
// from minBackoff up to maxBackoff. Each wait lets goroutines that are about
// to let go (a goroutine returning after cancel, a cleanup or a timer
// running late) run before the next GC.
const (
	minBackoff = 500 * time.Microsecond
	maxBackoff = 100 * time.Millisecond
)

func (tr *Tracker) wait(ctx context.Context) ([]Tracked, waitStats, error) {
	start := time.Now()
	deadline := start.Add(tr.opts.timeout)
	st := waitStats{total: tr.count()}
	if st.total == 0 {
		return nil, st, nil
	}
	backoff := minBackoff
	var timer *time.Timer
	for {
		runtime.GC()
		st.gcs++
		alive := tr.sweep()
		st.waited = time.Since(start)
		if len(alive) == 0 {
			return nil, st, nil
		}
		if err := ctx.Err(); err != nil {
			return alive, st, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return alive, st, nil
		}
		d := min(backoff, left)
		backoff = min(2*backoff, maxBackoff)
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
	}
}

func (tr *Tracker) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.objs)
}

// sweep forgets freed values and returns those still alive.
func (tr *Tracker) sweep() []Tracked {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var alive []Tracked
	kept := tr.objs[:0]
	for _, o := range tr.objs {
		if !isAlive(o.wp) {
			continue
		}
		kept = append(kept, o)
		t := o.Tracked
		t.Site = site(o.callers[0])
		alive = append(alive, t)
	}
	clear(tr.objs[len(kept):])
	tr.objs = kept
	return alive
}

// isAlive is not inlined so that the strong pointer Value returns dies with
// its frame and is never left in the caller's.
//
//go:noinline
func isAlive(wp weak.Pointer[byte]) bool {
	return wp.Value() != nil
}

func site(pc uintptr) string {
	if pc == 0 {
		return ""
	}
	fr, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	return binsym.Position{File: fr.File, Line: fr.Line}.FileLine()
}
