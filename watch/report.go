package watch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/selfdump"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// Report is what a Watcher found when enough values outlived their grace:
// the values, and who holds each, from a heap dump of the process analysed
// in the process.
type Report struct {
	Time time.Time `json:"time"`
	// OutlivedCount is the number of values that outlived their grace
	// since the previous report; Values explains the newest of the
	// outlived values still alive (at most 20).
	OutlivedCount int     `json:"outlived_count"`
	Values        []Value `json:"values"`
	// Dump is the heap dump's path when Options.DumpDir keeps it.
	Dump      string `json:"dump,omitempty"`
	DumpBytes int64  `json:"dump_bytes"`
	// DumpMS is how long the world was stopped to write the dump;
	// AnalysisMS how long the analysis took.
	DumpMS     int64 `json:"dump_ms"`
	AnalysisMS int64 `json:"analysis_ms"`
	// Unknown says what the report cannot tell, and Err why it could not
	// be made, when it could not.
	Unknown []heap.Unknown `json:"unknown"`
	Err     string         `json:"error,omitempty"`
	// LeakedGoroutines is the count of goroutines proven leaked by the
	// last goroutineleak profile (see LeakCheck), taken just after this
	// report's dump when Options.LeakInterval is set; 0 when none was
	// taken.
	LeakedGoroutines int `json:"leaked_goroutine_count"`
}

// Value is a value that outlived its grace.
type Value struct {
	Label string `json:"label"`
	Type  string `json:"type"`
	Addr  string `json:"addr"`
	// TrackedAt is where Track was called; nil for a request context.
	TrackedAt *binsym.Position `json:"tracked_at,omitempty"`
	// Holder is the root that keeps the value alive, with the path from it;
	// nil when the value was freed before the dump.
	Holder *heap.Group `json:"holder,omitempty"`
}

// Summary is the report in one line, as the Logger gets it: how many
// values outlived their grace and who holds the first value explained,
// with the values of the same label and type held the same way (the same
// function or global, created at the same site) counted together:
// `3 *context.cancelCtx "GET /leak" are held by 3 goroutines (22, 23 and
// 24) frame main.hold, created by main.handle (main.go:145)`.
func (r Report) Summary() string {
	s := r.summary()
	if r.LeakedGoroutines > 0 {
		s += fmt.Sprintf("; %s proven leaked", english.Plural(r.LeakedGoroutines, "goroutine"))
	}
	return s
}

func (r Report) summary() string {
	if r.Err != "" {
		return fmt.Sprintf("%s; no report: %s", outlived(r.OutlivedCount), textsafe.Escape(r.Err))
	}
	for i, v := range r.Values {
		if v.Holder == nil {
			continue
		}
		g, n := heldAlike(v, r.Values[i+1:])
		if n == 1 {
			return fmt.Sprintf("%s; %s %q is held by %s",
				outlived(r.OutlivedCount), textsafe.Escape(v.Type), v.Label, holderName(g))
		}
		return fmt.Sprintf("%s; %d %s %q are held by %s",
			outlived(r.OutlivedCount), n, textsafe.Escape(v.Type), v.Label, holderName(g))
	}
	return outlived(r.OutlivedCount) + "; freed before the dump"
}

// heldAlike returns v's holder group with the goroutines of the values of
// rest held like v added, and how many values, v included, it holds.
func heldAlike(v Value, rest []Value) (*heap.Group, int) {
	g := *v.Holder
	g.Goroutines = slices.Clone(g.Goroutines)
	n := 1
	for _, o := range rest {
		if o.Holder == nil || o.Label != v.Label || o.Type != v.Type || !sameHolder(o.Holder.Root, g.Root) {
			continue
		}
		n++
		g.Goroutines = append(g.Goroutines, o.Holder.Goroutines...)
	}
	slices.Sort(g.Goroutines)
	g.Goroutines = slices.Compact(g.Goroutines)
	return &g, n
}

// sameHolder says whether a and b hold values the same way: the same kind
// of root in the same function or global, created at the same site.
func sameHolder(a, b heap.Holder) bool {
	if a.Kind != b.Kind || a.Function != b.Function || a.Global != b.Global {
		return false
	}
	if a.CreatedBy == nil || b.CreatedBy == nil {
		return a.CreatedBy == b.CreatedBy
	}
	return *a.CreatedBy == *b.CreatedBy
}

// outlived says how many values outlived their grace.
func outlived(n int) string {
	if n == 1 {
		return "1 value outlived its grace"
	}
	return fmt.Sprintf("%d values outlived their grace", n)
}

// holderName is Group.Short with the creation site of a goroutine.
func holderName(g *heap.Group) string {
	s := g.Short()
	if h := g.Escaped().Root; h.CreatedBy != nil {
		s += ", created by " + h.CreatedBy.String()
	}
	return s
}

// WriteText writes the report for people: the summary, then each value
// with its holder and the path from it.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s\n", r.Time.Format(time.RFC3339), r.Summary())
	for _, u := range r.Unknown {
		fmt.Fprintf(&b, "  unknown: %s\n", textsafe.Escape(u.Text))
	}
	for _, v := range r.Values {
		title := fmt.Sprintf("%q %s", v.Label, textsafe.Escape(v.Type))
		if v.Holder == nil {
			fmt.Fprintf(&b, "\n%s at %s: freed before the dump\n", title, v.Addr)
			continue
		}
		// Names in the text come from the binary and the dump: Text
		// escapes them.
		text := v.Holder.Text(title, heap.PlainStyle{})
		first, rest, _ := strings.Cut(text, "\n")
		b.WriteString("\n" + first + "\n")
		if v.TrackedAt != nil {
			b.WriteString("    tracked at " + v.TrackedAt.String() + "\n")
		}
		b.WriteString(rest)
		if !strings.HasSuffix(rest, "\n") {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// report makes a report of the values that outlived their grace, unless a
// dump is being taken (the next check tries again).
func (w *Watcher) report() {
	select {
	case w.busy <- struct{}{}:
	default:
		return
	}
	defer func() { <-w.busy }()

	now := time.Now()
	w.mu.Lock()
	// The newest outlived values: those of earlier reports come first.
	vals := slices.Clone(w.outlived[max(0, len(w.outlived)-maxReportValues):])
	rep := Report{Time: now, OutlivedCount: w.newOut}
	w.newOut = 0
	w.lastRep = now
	w.mu.Unlock()

	w.explain(&rep, vals)

	lvl := slog.LevelWarn
	if rep.Err != "" {
		lvl = slog.LevelError
	}
	w.opts.Logger.Log(context.Background(), lvl, "ctxleak/watch: "+rep.Summary(), "outlived", rep.OutlivedCount, "dump_bytes", rep.DumpBytes)
	w.mu.Lock()
	w.nreports++
	w.reports = append(w.reports, rep)
	if len(w.reports) > keptReports {
		w.reports = append(w.reports[:0], w.reports[len(w.reports)-keptReports:]...)
	}
	w.mu.Unlock()
	if w.opts.OnReport != nil {
		w.opts.OnReport(rep)
	}
}

// explain dumps the heap and fills rep with the holders of vals.
func (w *Watcher) explain(rep *Report, vals []expectation) {
	rep.Values = make([]Value, len(vals))
	addrs := make([]uint64, len(vals))
	for i, e := range vals {
		rep.Values[i] = e.value()
		if e.site != 0 {
			fr, _ := runtime.CallersFrames([]uintptr{e.site}).Next()
			rep.Values[i].TrackedAt = &binsym.Position{Function: fr.Function, File: fr.File, Line: fr.Line}
		}
		addrs[i] = uint64(e.addr)
	}
	rep.Unknown = []heap.Unknown{}
	c, err := w.withDump(w.opts.LeakInterval > 0, func(d selfdump.Dump, a *heap.Analysis) error {
		rep.DumpBytes, rep.DumpMS = d.Size, d.Took.Milliseconds()
		if w.opts.DumpDir != "" {
			rep.Dump = d.Path
		}
		rep.Unknown = append(rep.Unknown, a.Unknown...)
		start := time.Now()
		groups, err := a.Explain(addrs)
		rep.AnalysisMS += time.Since(start).Milliseconds()
		if err != nil {
			return err
		}
		for i, g := range groups {
			// Without DWARF the object may be untyped; the watcher knows
			// the type of the value it watched at that address.
			if typ := strings.TrimPrefix(rep.Values[i].Type, "*"); g != nil && g.Object.Type == "" {
				g.Object.Type = typ
				if last := &g.Path[len(g.Path)-1]; last.Type == "" && last.Addr == g.Object.Addr {
					last.Type = typ
				}
			}
			rep.Values[i].Holder = g
		}
		return nil
	})
	if err != nil {
		rep.Err = err.Error()
	}
	if c != nil {
		w.keepLeakCheck(c)
	}
	w.mu.Lock()
	if w.lastLeak != nil {
		rep.LeakedGoroutines = w.lastLeak.Count
	}
	w.mu.Unlock()
}

// withDump writes a heap dump of the process, analyses it with the running
// executable for names and calls f (when not nil) with it; then deletes the
// dump unless Options.DumpDir keeps it. With leaks set, on a Go with the
// goroutineleak profile, it takes the profile just after the dump and
// returns the check, its bytes from the same dump (nil otherwise). The
// caller holds the busy token.
func (w *Watcher) withDump(leaks bool, f func(selfdump.Dump, *heap.Analysis) error) (*LeakCheck, error) {
	leaks = leaks && leakProfile() != nil
	var c *LeakCheck
	dir := w.opts.DumpDir
	if dir == "" {
		d, err := os.MkdirTemp("", "ctxleak-watch-*")
		if err != nil {
			err = fmt.Errorf("making a directory for the heap dump: %w", err)
			return leakFailed(leaks, err), err
		}
		dir = d
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		err = fmt.Errorf("making the heap dump directory: %w", err)
		return leakFailed(leaks, err), err
	}
	const pattern = "ctxleak-watch-*.heapdump"
	var d selfdump.Dump
	var err error
	if leaks {
		d, c, err = profileAfterDump(dir, pattern)
	} else {
		d, err = selfdump.Write(dir, pattern)
	}
	if err != nil {
		return c, err
	}
	bin := w.binary()
	a, err := heap.Analyze(d.Path, bin)
	if err != nil {
		err = fmt.Errorf("analysing the heap dump: %w", err)
		if c != nil {
			c.DumpErr = err.Error()
			c.mark(nil)
		}
		return c, err
	}
	defer a.Close()
	if c != nil {
		c.mark(a)
	}
	if f == nil {
		return c, nil
	}
	return c, f(d, a)
}

// leakFailed is the check when no dump could be started: the profile is
// taken alone, and the check says why it has no bytes.
func leakFailed(leaks bool, err error) *LeakCheck {
	if !leaks {
		return nil
	}
	c := profileLeaks()
	c.DumpErr = err.Error()
	return c
}

// binary returns the running executable, opened once, or nil when it cannot
// be read (the analysis then says what it cannot tell). The caller holds the
// busy token.
func (w *Watcher) binary() *binsym.Binary {
	if w.binDone {
		return w.bin
	}
	w.binDone = true
	exe, err := os.Executable()
	if err == nil {
		w.bin, _ = binsym.Open(exe)
	}
	return w.bin
}
