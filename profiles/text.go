package profiles

import (
	"fmt"
	"io"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/ui"
)

// WriteText writes the report for people: summaries, tables of the top
// sites and goroutine groups, the stacks with Settings.FullStack, and the
// gates. Styled output has colours and rounded table borders; plain output
// has neither. Both fit the width ui.Width finds for w.
func (r *Report) WriteText(w io.Writer, styled bool) error {
	mode := ui.Plain
	if styled {
		mode = ui.Styled
	}
	var b strings.Builder
	p := ui.NewPrinter(&b, mode)
	p.SetWidth(ui.Width(w))
	sections := 0
	if r.Heap != nil {
		r.writeHeapText(p)
		sections++
	}
	if r.Goroutines != nil {
		if sections > 0 {
			p.Print("")
		}
		r.writeGoroutinesText(p)
		sections++
	}
	if r.Leaked != nil {
		if sections > 0 {
			p.Print("")
		}
		r.writeLeakedText(p)
		sections++
	}
	if len(r.Gates) > 0 {
		if sections > 0 {
			p.Print("")
		}
		r.writeGatesText(p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) writeHeapText(p *ui.Printer) {
	h := r.Heap
	title := "Heap in use: " + strings.Join(r.sources(Heap, RoleProfile), ", ")
	if h.Base != nil {
		title += " (base: " + strings.Join(r.sources(Heap, RoleBase), ", ") + ")"
	}
	p.Print(p.Heading(title))
	rows := [][2]string{
		{"in use", fmt.Sprintf("%s in %s", bytesize.Format(h.InuseBytes), english.Plural(int(h.InuseObjects), "object"))},
	}
	req := fmt.Sprintf("%s in %s (%s of in use), allocated on request paths and still in use",
		bytesize.Format(h.RequestBytes), english.Plural(int(h.RequestObjects), "object"), percent(h.RequestBytes, h.InuseBytes))
	if h.RequestBytes > 0 {
		req = p.Warn(req)
	}
	rows = append(rows, [2]string{"request-scoped", req})
	if g := h.Base; g != nil {
		growth := fmt.Sprintf("%s and %s against the base (%s in %s); %s",
			bytesize.FormatDelta(g.GrowthBytes), english.PluralDelta(int64(g.GrowthObjects), "object"), bytesize.Format(g.InuseBytes), english.Plural(int(g.InuseObjects), "object"), english.Plural(g.NewSites, "new site"))
		if g.GrowthBytes > 0 {
			growth = p.Warn(growth)
		}
		rows = append(rows, [2]string{"growth", growth})
		if g.Requests > 0 {
			rows = append(rows, [2]string{"per request", fmt.Sprintf("%s over %s",
				bytesize.FormatDelta(int64(g.PerRequestBytes)), english.Plural(int(g.Requests), "request"))})
		}
	}
	printPairs(p, rows)

	sites := r.topSites()
	if len(sites) == 0 {
		return
	}
	order := "in use"
	if h.Base != nil {
		order = "growth"
	}
	fullStack := r.Settings.FullStack
	p.Print("")
	p.Print(p.Heading(fmt.Sprintf("Allocation sites by %s: top %d of %d", order, len(sites), len(h.Sites))))
	t := ui.Table{Headers: []string{"site", "in use", "objects"}, Right: []int{1, 2}}
	if h.Base != nil {
		t.Headers = append(t.Headers, "growth")
		t.Right = append(t.Right, len(t.Headers)-1)
		if h.Base.Requests > 0 {
			t.Headers = append(t.Headers, "per request")
			t.Right = append(t.Right, len(t.Headers)-1)
		}
	}
	t.Headers = append(t.Headers, "request-scoped")
	t.Right = append(t.Right, len(t.Headers)-1)
	if fullStack {
		t.Headers = append([]string{"#"}, t.Headers...)
		for i := range t.Right {
			t.Right[i]++
		}
		t.Right = append(t.Right, 0)
	}
	for i, s := range sites {
		row := []string{s.Position.String(), bytesize.Format(s.InuseBytes), fmt.Sprint(s.InuseObjects)}
		if g := s.Growth; g != nil {
			cell := bytesize.FormatDelta(g.Bytes)
			if g.New && g.Bytes != 0 {
				cell += " (new)"
			}
			if g.Bytes > 0 {
				cell = p.Warn(cell)
			}
			row = append(row, cell)
			if h.Base.Requests > 0 {
				row = append(row, bytesize.FormatDelta(int64(g.PerRequestBytes)))
			}
		}
		reqCell := "-"
		if s.Request {
			reqCell = p.Warn(bytesize.Format(s.RequestBytes))
		}
		row = append(row, reqCell)
		if fullStack {
			row = append([]string{fmt.Sprint(i + 1)}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	p.Print(p.Table(t))
	if fullStack {
		printStacks(p, 0, len(sites), func(i int) (binsym.Position, []binsym.Position) {
			return sites[i].Position, sites[i].Stack
		})
	}
}

func (r *Report) writeGoroutinesText(p *ui.Printer) {
	g := r.Goroutines
	title := "Goroutines: " + strings.Join(r.sources(Goroutine, RoleProfile), ", ")
	if g.Base != nil {
		title += " (base: " + strings.Join(r.sources(Goroutine, RoleBase), ", ") + ")"
	}
	p.Print(p.Heading(title))
	captured := fmt.Sprintf("%d off the request path still carry request labels (%s)",
		g.Captured, strings.Join(r.Settings.requestLabels(), ", "))
	if g.Captured > 0 {
		captured = p.Warn(captured)
	}
	printPairs(p, [][2]string{
		{"goroutines", fmt.Sprintf("%d in %s", g.Total, english.Plural(len(g.Groups), "group"))},
		{"captured", captured},
		{"in flight", fmt.Sprintf("%d on a request path, serving a request", g.InFlight)},
	})

	var capturedGroups, others []GoroutineGroup
	for _, gr := range g.Groups {
		if gr.Captured {
			capturedGroups = append(capturedGroups, gr)
		} else {
			others = append(others, gr)
		}
	}
	fullStack := r.Settings.FullStack
	n := 0
	table := func(title string, groups []GoroutineGroup) {
		if len(groups) == 0 {
			return
		}
		shown := topN(groups, r.Settings.Top)
		p.Print("")
		p.Print(p.Heading(fmt.Sprintf("%s: top %d of %s", title, len(shown), english.Plural(len(groups), "group"))))
		t := ui.Table{Headers: []string{"goroutines", "started in", "waiting in", "labels"}, Right: []int{0}}
		if fullStack {
			t.Headers = append([]string{"#"}, t.Headers...)
			t.Right = []int{0, 1}
		}
		for _, gr := range shown {
			n++
			row := []string{fmt.Sprint(gr.Count), gr.Start.String(), gr.Wait.String(), r.labelsCell(gr)}
			if fullStack {
				row = append([]string{fmt.Sprint(n)}, row...)
			}
			t.Rows = append(t.Rows, row)
		}
		p.Print(p.Table(t))
		if fullStack {
			printStacks(p, n-len(shown), len(shown), func(i int) (binsym.Position, []binsym.Position) {
				return shown[i].Start, shown[i].Stack
			})
		}
	}
	table("Captured request contexts", capturedGroups)
	table("Other goroutines", others)
	if g.Base != nil {
		p.Print("")
		r.writeGoroutineGrowthText(p)
	}
}

// labelsCell lists a group's label keys, with their values under
// Settings.LabelValues (at most three per key).
func (r *Report) labelsCell(g GoroutineGroup) string {
	if len(g.LabelKeys) == 0 {
		return "-"
	}
	if !r.Settings.LabelValues {
		return strings.Join(g.LabelKeys, ", ")
	}
	var parts []string
	for _, k := range g.LabelKeys {
		vs := g.Labels[k]
		s := k + "=" + strings.Join(topN(vs, 3), " ")
		if len(vs) > 3 {
			s += fmt.Sprintf(" … (%d values)", len(vs))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func (r *Report) writeGatesText(p *ui.Printer) {
	p.Print(p.Heading("Gates"))
	for _, g := range r.Gates {
		mark := p.Good("pass")
		if g.Tripped {
			mark = p.Bad("FAIL")
		}
		p.Print(fmt.Sprintf("  %s  %-10s  %s (%s)", mark, g.Gate, g.Reason, r.Setting(g)))
	}
}

// printPairs prints aligned "  name   value" lines.
func printPairs(p *ui.Printer, rows [][2]string) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		p.Print(fmt.Sprintf("  %-*s  %s", width, r[0], r[1]))
	}
}

// printStacks prints n numbered stacks, leaf first, numbering from first+1.
func printStacks(p *ui.Printer, first, n int, get func(int) (binsym.Position, []binsym.Position)) {
	p.Print("")
	for i := range n {
		name, stack := get(i)
		p.Print(p.Bold(fmt.Sprintf("#%d %s", first+i+1, name)))
		for _, f := range stack {
			p.Print("    " + p.Faint(f.String()))
		}
	}
}
