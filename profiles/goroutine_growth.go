package profiles

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/ui"
)

// GoroutineGrowth compares a goroutine report with one of a base profile:
// the goroutines a running service gained between the two, with no need
// for pprof labels.
//
// Goroutines are matched by the function they started in and where they
// wait (and by whole stack with Options.FullStack), whatever their labels.
// Go's goroutine profiles do not say where a goroutine was created: the
// proto form (debug=0) and the legacy text (debug=1) hold only the
// goroutine's own stack, whose outermost frame is its start function; only
// the debug=2 dump, which is not a profile, prints "created by".
type GoroutineGrowth struct {
	// BaseTotal counts the goroutines of the base profile.
	BaseTotal int64 `json:"goroutine_count"`
	// Growth sums the growth of the groups that grew: goroutines that
	// groups which shrank lost do not offset it.
	Growth int64 `json:"growth_count"`
	// Groups are the groups that grew, largest growth first.
	Groups []GoroutineGrowthGroup `json:"groups"`
}

// GoroutineGrowthGroup is one group of goroutines that grew against the
// base.
type GoroutineGrowthGroup struct {
	// Start is the function the goroutines started in; Wait is where they
	// are blocked or running, as in GoroutineGroup.
	Start binsym.Position `json:"start"`
	Wait  binsym.Position `json:"wait"`
	// Stack is the whole stack, leaf first, with Options.FullStack.
	Stack []binsym.Position `json:"stack,omitempty"`
	// Count and BaseCount count the group's goroutines in the profile and
	// in the base; Growth is Count minus BaseCount, above zero.
	Count     int64 `json:"goroutine_count"`
	BaseCount int64 `json:"base_goroutine_count"`
	Growth    int64 `json:"growth_count"`
}

// CompareGoroutines returns the growth of profile's goroutine groups
// against base's. Both reports must come from AnalyzeGoroutines with the
// same Options.
func CompareGoroutines(profile, base *GoroutineReport) *GoroutineGrowth {
	type group struct {
		g           GoroutineGrowthGroup
		count, base int64
	}
	groups := make(map[string]*group)
	add := func(r *GoroutineReport, inBase bool) {
		for _, gr := range r.Groups {
			k := growthKey(gr)
			e := groups[k]
			if e == nil {
				e = &group{g: GoroutineGrowthGroup{Start: gr.Start, Wait: gr.Wait, Stack: gr.Stack}}
				groups[k] = e
			}
			if inBase {
				e.base += gr.Count
			} else {
				e.count += gr.Count
			}
		}
	}
	add(profile, false)
	add(base, true)
	out := &GoroutineGrowth{BaseTotal: base.Total, Groups: []GoroutineGrowthGroup{}}
	for _, e := range groups {
		if e.count <= e.base {
			continue
		}
		g := e.g
		g.Count, g.BaseCount, g.Growth = e.count, e.base, e.count-e.base
		out.Growth += g.Growth
		out.Groups = append(out.Groups, g)
	}
	slices.SortFunc(out.Groups, func(x, y GoroutineGrowthGroup) int {
		return cmp.Or(
			cmp.Compare(y.Growth, x.Growth),
			compareFrames(x.Start, y.Start),
			compareFrames(x.Wait, y.Wait),
			slices.CompareFunc(x.Stack, y.Stack, compareFrames),
		)
	})
	return out
}

// growthKey identifies a group across reports: start, wait and stack,
// without labels.
func growthKey(g GoroutineGroup) string {
	parts := []string{g.Start.String(), g.Wait.String()}
	for _, f := range g.Stack {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "\x00")
}

// writeGoroutineGrowthText writes the growth summary and a table of the
// groups that grew, cut to Settings.Top.
func (r *Report) writeGoroutineGrowthText(p *ui.Printer) {
	g := r.Goroutines.Base
	if g == nil {
		return
	}
	growth := fmt.Sprintf("%+d goroutines in %d groups that grew, against %d goroutines in the base",
		g.Growth, len(g.Groups), g.BaseTotal)
	if g.Growth > 0 {
		growth = p.Warn(growth)
	}
	printPairs(p, [][2]string{{"growth", growth}})
	if len(g.Groups) == 0 {
		return
	}
	shown := topN(g.Groups, r.Settings.Top)
	p.Print("")
	p.Print(p.Heading(fmt.Sprintf("Goroutine growth: top %d of %d groups", len(shown), len(g.Groups))))
	t := ui.Table{Headers: []string{"growth", "goroutines", "base", "started in", "waiting in"}, Right: []int{0, 1, 2}}
	for _, gr := range shown {
		t.Rows = append(t.Rows, []string{p.Warn(fmt.Sprintf("%+d", gr.Growth)), fmt.Sprint(gr.Count),
			fmt.Sprint(gr.BaseCount), gr.Start.String(), gr.Wait.String()})
	}
	p.Print(p.Table(t))
}
