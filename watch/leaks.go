package watch

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/leakedg"
	"github.com/ctxleak/ctxleak/internal/selfdump"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// The states of Stats.LeakProfile.
const (
	LeakProfileOff         = "off"         // no leak check asked for
	LeakProfileOn          = "on"          // leak checks taken
	LeakProfileUnavailable = "unavailable" // asked for, on a Go before 1.27
)

// maxLeakGroups is how many groups of leaked goroutines a LeakCheck lists.
const maxLeakGroups = 20

// LeakCheck is what one goroutineleak profile (Go 1.27's runtime/pprof)
// found: the goroutines the runtime proved leaked, blocked for ever on
// channels or locks nothing runnable can reach.
type LeakCheck struct {
	Time time.Time `json:"time"`
	// Count is the number of goroutines the profile marked leaked;
	// ProfileCount is the profile's own count, which also counts a main
	// goroutine blocked in select {} (the runtime takes its mark back).
	Count        int `json:"leaked_goroutine_count"`
	ProfileCount int `json:"profile_count"`
	// Dumped is set when a heap dump was taken just before the profile
	// (Options.LeakDump, or the dump of a report): RetainedBytes is then
	// what the leaked goroutines' own roots (frames, defers, runtime.g)
	// alone keep alive in it, bytes another root reaches too left out, and
	// InDump how many of the goroutines the dump has.
	Dumped        bool   `json:"dumped"`
	RetainedBytes uint64 `json:"retained_bytes"`
	InDump        int    `json:"in_dump_count"`
	// Groups are the leaked goroutines grouped by where they block and
	// where they were created, most bytes (then most goroutines) first;
	// at most 20.
	Groups []LeakGroup `json:"groups"`
	// DumpErr says why no dump was taken before the profile when one was
	// asked for; Err why the check failed.
	DumpErr string `json:"dump_error,omitempty"`
	Err     string `json:"error,omitempty"`
}

// LeakGroup is leaked goroutines blocked in the same function, in the same
// wait, created at the same site.
type LeakGroup struct {
	Count int `json:"goroutine_count"`
	// Function is the innermost frame outside package runtime, at
	// Location; Wait the wait reason, such as "chan send".
	Function  string `json:"function"`
	Location  string `json:"location"`
	Wait      string `json:"wait"`
	CreatedBy string `json:"created_by,omitempty"`
	CreatedAt string `json:"created_at,omitempty"`
	// RetainedBytes is what the group's goroutines alone keep alive, when
	// the check had a dump.
	RetainedBytes uint64 `json:"retained_bytes"`
	// IDs are the first goroutine ids of the group (at most 10).
	IDs []uint64 `json:"goroutine_ids"`
}

// Summary is the check in one line, as the Logger gets it: `20 goroutines
// proven leaked, retaining 320.0 KiB; 20 in main.leak.func1 [chan send],
// created by main.leak`.
func (c LeakCheck) Summary() string {
	if c.Err != "" {
		return "goroutine leak check failed: " + textsafe.Escape(c.Err)
	}
	s := english.Plural(c.Count, "goroutine") + " proven leaked (goroutineleak profile)"
	switch {
	case c.Dumped:
		s += ", retaining " + bytesize.Format(int64(c.RetainedBytes))
	case c.DumpErr != "" && c.Count > 0:
		s += ", bytes retained unknown: no heap dump"
	}
	if len(c.Groups) > 0 {
		g := c.Groups[0]
		s += fmt.Sprintf("; %d in %s [%s]", g.Count, textsafe.Escape(g.Function), textsafe.Escape(g.Wait))
		if g.CreatedBy != "" {
			s += ", created by " + textsafe.Escape(g.CreatedBy)
		}
	}
	return s
}

// leakProfile is Go 1.27's goroutineleak profile, nil before 1.27.
func leakProfile() *pprof.Profile { return pprof.Lookup("goroutineleak") }

// CheckLeaks takes the goroutineleak profile now, as Options.LeakInterval
// does on its schedule, with a heap dump first when Options.LeakDump is
// set and the process may be dumped; it logs the check, keeps it for Stats
// and the Handler, and returns it. It runs one extra GC cycle, and waits
// for a dump being taken. On a Go without the profile it returns a check
// whose Err says so, logged once per Watcher.
//
// Once a profile has marked goroutines leaked, no heap dump of the process
// is possible for the rest of its life (the runtime would die): reports
// then have no holders, and their Err says why.
func (w *Watcher) CheckLeaks() LeakCheck {
	if leakProfile() == nil {
		return w.noLeakProfile()
	}
	w.busy <- struct{}{}
	defer func() { <-w.busy }()
	var c *LeakCheck
	if w.opts.LeakDump {
		c, _ = w.withDump(true, nil)
	} else {
		c = profileLeaks()
	}
	w.keepLeakCheck(c)
	return *c
}

// noLeakProfile is the check on a Go without the profile: it says so in
// the log once per Watcher.
func (w *Watcher) noLeakProfile() LeakCheck {
	c := LeakCheck{Time: time.Now(), Groups: []LeakGroup{},
		Err: fmt.Sprintf("the goroutineleak profile is not available in %s (Go 1.27 and later have it)", runtime.Version())}
	w.mu.Lock()
	first := w.leakState != LeakProfileUnavailable
	w.leakState = LeakProfileUnavailable
	w.mu.Unlock()
	if first {
		w.opts.Logger.Info("ctxleak/watch: " + c.Err + "; leak checks are off")
	}
	return c
}

// profileLeaks takes the profile without a dump.
func profileLeaks() *LeakCheck {
	c := &LeakCheck{Time: time.Now()}
	p := leakProfile()
	if err := p.WriteTo(io.Discard, 0); err != nil {
		c.Err = "writing the goroutineleak profile: " + err.Error()
	}
	c.ProfileCount = p.Count()
	c.mark(nil)
	return c
}

// profileAfterDump writes a heap dump into dir and then takes the profile
// (selfdump.WriteThenProfileLeaks). It returns the dump, with an empty
// Path when none was written, and the check, whose bytes mark fills from
// the dump's analysis.
func profileAfterDump(dir, pattern string) (selfdump.Dump, *LeakCheck, error) {
	c := &LeakCheck{Time: time.Now()}
	d, n, err := selfdump.WriteThenProfileLeaks(dir, pattern, io.Discard)
	c.ProfileCount = n
	if d.Path == "" {
		if err != nil {
			c.DumpErr = err.Error()
		}
		c.mark(nil)
		return d, c, err
	}
	if err != nil {
		c.Err = err.Error()
	}
	return d, c, nil
}

// mark fills the check with the goroutines marked leaked now, and their
// bytes from a, the analysis of a dump taken just before the profile, when
// a is not nil.
func (c *LeakCheck) mark(a *heap.Analysis) {
	gs, _ := leakedg.Marked()
	c.Count = len(gs)
	if a != nil {
		c.Dumped = true
		c.InDump, c.RetainedBytes = leakedg.Retained(a, gs)
	}
	c.Groups = groupLeaked(gs)
}

// groupLeaked groups gs by function, wait and creation site.
func groupLeaked(gs []leakedg.Goroutine) []LeakGroup {
	groups := make([]LeakGroup, 0, len(gs))
	for _, g := range leakedg.Groups(gs) {
		groups = append(groups, LeakGroup(g))
	}
	slices.SortStableFunc(groups, func(a, b LeakGroup) int {
		return cmp.Or(cmp.Compare(b.RetainedBytes, a.RetainedBytes), cmp.Compare(b.Count, a.Count))
	})
	return groups[:min(len(groups), maxLeakGroups)]
}

// keepLeakCheck logs c and keeps it as the last check.
func (w *Watcher) keepLeakCheck(c *LeakCheck) {
	lvl := slog.LevelInfo
	switch {
	case c.Err != "":
		lvl = slog.LevelError
	case c.Count > 0:
		lvl = slog.LevelWarn
	}
	w.opts.Logger.Log(context.Background(), lvl, "ctxleak/watch: "+c.Summary(),
		"leaked_goroutines", c.Count, "leaked_retained_bytes", c.RetainedBytes)
	w.mu.Lock()
	w.leakState = LeakProfileOn
	w.leakChecks++
	w.lastLeak = c
	if c.Dumped {
		w.leakBytes = c.RetainedBytes
	}
	w.mu.Unlock()
}
