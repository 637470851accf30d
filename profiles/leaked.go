package profiles

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/ui"
)

// CheckReport applies the gates to r: those of Check, then the Leaked gate
// to r.Leaked, which it needs.
func (g Gates) CheckReport(r *Report) ([]GateResult, error) {
	out, err := g.Check(r.Heap, r.Goroutines)
	if err != nil || g.Leaked == nil {
		return out, err
	}
	if r.Leaked == nil {
		return nil, fmt.Errorf("the leaked goroutines gate needs a goroutineleak profile")
	}
	v := r.Leaked.Total
	res := GateResult{Gate: GateLeaked, Limit: *g.Leaked, Value: v, Tripped: v > *g.Leaked}
	res.Reason = fmt.Sprintf("%d goroutines proven leaked in %s", v, english.Plural(len(r.Leaked.Groups), "group")) +
		verdict(res, fmt.Sprint(*g.Leaked))
	return append(out, res), nil
}

// writeLeakedText writes the groups of proven-leaked goroutines.
func (r *Report) writeLeakedText(p *ui.Printer) {
	g := r.Leaked
	p.Print(p.Heading("Leaked goroutines: " + strings.Join(r.sources(GoroutineLeak, RoleProfile), ", ")))
	leaked := fmt.Sprintf("%d in %s, blocked for ever on channels or locks nothing runnable can reach",
		g.Total, english.Plural(len(g.Groups), "group"))
	if g.Total > 0 {
		leaked = p.Warn(leaked)
	}
	printPairs(p, [][2]string{
		{"leaked", leaked},
		{"not seen", "goroutines blocked on something a global or a runnable goroutine still reaches (the profile's limit)"},
	})
	if len(g.Groups) == 0 {
		return
	}
	shown := topN(g.Groups, r.Settings.Top)
	p.Print("")
	p.Print(p.Heading(fmt.Sprintf("Leaked goroutines: top %d of %s", len(shown), english.Plural(len(g.Groups), "group"))))
	t := ui.Table{Headers: []string{"goroutines", "started in", "blocked in", "on"}, Right: []int{0}}
	for _, gr := range shown {
		t.Rows = append(t.Rows, []string{fmt.Sprint(gr.Count), gr.Start.String(), gr.Wait.String(), cmp.Or(gr.BlockedOn, "?")})
	}
	p.Print(p.Table(t))
	if r.Settings.FullStack {
		printStacks(p, 0, len(shown), func(i int) (binsym.Position, []binsym.Position) {
			return shown[i].Start, shown[i].Stack
		})
	}
	if b := g.Base; b != nil {
		p.Print("")
		p.Print(p.Heading(fmt.Sprintf("Leaked against the base (%s): %+d in %s that grew, %d in the base",
			strings.Join(r.sources(GoroutineLeak, RoleBase), ", "), b.Growth, english.Plural(len(b.Groups), "group"), b.BaseTotal)))
		t := ui.Table{Headers: []string{"growth", "now", "base", "started in", "blocked in"}, Right: []int{0, 1, 2}}
		for _, gr := range topN(b.Groups, r.Settings.Top) {
			t.Rows = append(t.Rows, []string{fmt.Sprintf("%+d", gr.Growth), fmt.Sprint(gr.Count), fmt.Sprint(gr.BaseCount), gr.Start.String(), gr.Wait.String()})
		}
		if len(t.Rows) > 0 {
			p.Print(p.Table(t))
		}
	}
}

// blockers name what the runtime function a goroutine parked in blocks on,
// as its wait reasons do.
var blockers = map[string]string{
	"runtime.chansend":                      "chan send",
	"runtime.chanrecv":                      "chan receive",
	"runtime.selectgo":                      "select",
	"runtime.block":                         "select (no cases)",
	"sync.runtime_SemacquireMutex":          "sync.Mutex.Lock",
	"internal/sync.runtime_SemacquireMutex": "sync.Mutex.Lock",
	"sync.runtime_SemacquireRWMutexR":       "sync.RWMutex.RLock",
	"sync.runtime_SemacquireRWMutex":        "sync.RWMutex.Lock",
	"sync.runtime_notifyListWait":           "sync.Cond.Wait",
	"sync.runtime_SemacquireWaitGroup":      "sync.WaitGroup.Wait",
	"sync.runtime_Semacquire":               "sync.WaitGroup.Wait",
}

// blockedOn returns what a stack, leaf first, is blocked on: the first of
// its functions that blockers names, or "".
func blockedOn(locs []*profile.Location) string {
	for _, loc := range locs {
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			if b, ok := blockers[ln.Function.Name]; ok {
				return b
			}
		}
	}
	return ""
}

// BlockedOn returns the wait reason of a goroutineleak profile's stack,
// leaf first, from the runtime function it is parked in ("chan send"), or
// "" when its frames do not say.
func BlockedOn(locs []*profile.Location) string { return blockedOn(locs) }
