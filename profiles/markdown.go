package profiles

import (
	"fmt"
	"io"
	"strings"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
)

// WriteMarkdown writes the report as a GitHub Actions step summary: the
// gates, the heap totals and top sites, and the captured goroutine groups,
// in Markdown tables.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("### " + r.title() + "\n\n")
	if len(r.Gates) > 0 {
		for _, g := range r.Gates {
			mark := "✅ pass"
			if g.Tripped {
				mark = "❌ **fail**"
			}
			fmt.Fprintf(&b, "- %s %s: %s (`%s`)\n", mark, g.Gate, mdEscape(g.Reason), r.Setting(g))
		}
		b.WriteString("\n")
	}
	if h := r.Heap; h != nil {
		b.WriteString("| heap | |\n|---|---|\n")
		fmt.Fprintf(&b, "| in use | %s in %s |\n", bytesize.Format(h.InuseBytes), english.Plural(int(h.InuseObjects), "object"))
		fmt.Fprintf(&b, "| request-scoped, still in use | %s in %s (%s) |\n",
			bytesize.Format(h.RequestBytes), english.Plural(int(h.RequestObjects), "object"), percent(h.RequestBytes, h.InuseBytes))
		if g := h.Base; g != nil {
			fmt.Fprintf(&b, "| growth against the base | %s, %s, %s |\n",
				bytesize.FormatDelta(g.GrowthBytes), english.PluralDelta(int64(g.GrowthObjects), "object"), english.Plural(g.NewSites, "new site"))
			if g.Requests > 0 {
				fmt.Fprintf(&b, "| growth per request | %s over %d requests |\n", bytesize.FormatDelta(int64(g.PerRequestBytes)), g.Requests)
			}
		}
		b.WriteString("\n")
		if sites := r.topSites(); len(sites) > 0 {
			b.WriteString("| site | in use | objects |")
			if h.Base != nil {
				b.WriteString(" growth |")
			}
			b.WriteString(" request-scoped |\n|---|---:|---:|")
			if h.Base != nil {
				b.WriteString("---:|")
			}
			b.WriteString("---:|\n")
			for _, s := range sites {
				fmt.Fprintf(&b, "| `%s` | %s | %d |", mdCode(s.Position.String()), bytesize.Format(s.InuseBytes), s.InuseObjects)
				if s.Growth != nil {
					fmt.Fprintf(&b, " %s |", bytesize.FormatDelta(s.Growth.Bytes))
				}
				req := "-"
				if s.Request {
					req = bytesize.Format(s.RequestBytes)
				}
				fmt.Fprintf(&b, " %s |\n", req)
			}
			b.WriteString("\n")
		}
	}
	if g := r.Goroutines; g != nil {
		fmt.Fprintf(&b, "**Goroutines:** %d; %d off the request path still carry request labels; %d serving requests.\n\n",
			g.Total, g.Captured, g.InFlight)
		var rows []GoroutineGroup
		for _, gr := range g.Groups {
			if gr.Captured {
				rows = append(rows, gr)
			}
		}
		if rows = topN(rows, r.Settings.Top); len(rows) > 0 {
			b.WriteString("| captured goroutines | started in | waiting in | label keys |\n|---:|---|---|---|\n")
			for _, gr := range rows {
				fmt.Fprintf(&b, "| %d | `%s` | `%s` | %s |\n", gr.Count, mdCode(gr.Start.String()),
					mdCode(gr.Wait.String()), mdEscape(strings.Join(gr.LabelKeys, ", ")))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape escapes text for a Markdown table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`, "<", "&lt;", "`", "'").Replace(s)
}

// mdCode makes s safe inside a code span in a table cell.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`, "\n", " ").Replace(s)
}
