package profiles

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
)

// WriteGitHub writes GitHub Actions workflow commands: an ::error
// annotation for each gate that tripped and its top offenders (at most 10),
// or one ::notice that sums the report up when none did. Files under
// workspace ($GITHUB_WORKSPACE; "" for none) are given relative to it, as
// annotations need.
func (r *Report) WriteGitHub(w io.Writer, workspace string) error {
	var b strings.Builder
	annotate := func(level string, pos *binsym.Position, title, msg string) {
		props := []string{}
		if pos != nil && pos.File != "" {
			file := pos.File
			if workspace != "" {
				file = strings.TrimPrefix(file, strings.TrimSuffix(workspace, "/")+"/")
			}
			props = append(props, "file="+escapeProperty(file))
			if pos.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", pos.Line))
			}
		}
		props = append(props, "title="+escapeProperty(title))
		fmt.Fprintf(&b, "::%s %s::%s\n", level, strings.Join(props, ","), escapeData(msg))
	}
	limit := r.Settings.Top
	if limit <= 0 || limit > 10 {
		limit = 10
	}
	tripped := false
	for _, g := range r.Gates {
		if !g.Tripped {
			continue
		}
		tripped = true
		annotate("error", nil, "ctxleak: "+g.Gate+" gate", fmt.Sprintf("%s (%s)", g.Reason, r.Setting(g)))
		switch g.Gate {
		case GateGrowth:
			for _, s := range topN(r.Heap.Sites, limit) {
				if s.Growth.Bytes <= 0 {
					break
				}
				msg := fmt.Sprintf("%s: heap in use grew by %s (%s) against the base",
					s.Function, bytesize.FormatDelta(s.Growth.Bytes), english.PluralDelta(int64(s.Growth.Objects), "object"))
				if r.Heap.Base.Requests > 0 {
					msg += fmt.Sprintf(", %s per request", bytesize.FormatDelta(int64(s.Growth.PerRequestBytes)))
				}
				if s.Request {
					msg += "; allocated on a request path"
				}
				annotate("error", &s.Position, "ctxleak: heap growth", msg)
			}
		case GateRetained:
			for _, s := range topN(byRequestBytes(r.Heap.Sites), limit) {
				annotate("error", &s.Position, "ctxleak: request-scoped memory in use",
					fmt.Sprintf("%s: %s in %s allocated on a request path is still in use",
						s.Function, bytesize.Format(s.RequestBytes), english.Plural(int(s.RequestObjects), "object")))
			}
		case GateGoroutines:
			n := 0
			for _, gr := range r.Goroutines.Groups {
				if !gr.Captured || n == limit {
					break
				}
				n++
				annotate("error", &gr.Wait, "ctxleak: captured request goroutines",
					fmt.Sprintf("%d goroutines started in %s, waiting in %s, still carry request labels (%s)",
						gr.Count, gr.Start.Function, gr.Wait.Function, strings.Join(gr.LabelKeys, ", ")))
			}
		}
	}
	if !tripped {
		annotate("notice", nil, r.title(), r.summaryLine())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// byRequestBytes returns the request-scoped sites, most request-scoped
// bytes first.
func byRequestBytes(sites []AllocSite) []AllocSite {
	var out []AllocSite
	for _, s := range sites {
		if s.RequestBytes > 0 {
			out = append(out, s)
		}
	}
	// A stable sort keeps the report's order among equals.
	slices.SortStableFunc(out, func(x, y AllocSite) int { return cmp.Compare(y.RequestBytes, x.RequestBytes) })
	return out
}

// summaryLine says in one line what was found.
func (r *Report) summaryLine() string {
	var parts []string
	if h := r.Heap; h != nil {
		parts = append(parts, fmt.Sprintf("heap in use %s, request-scoped %s", bytesize.Format(h.InuseBytes), bytesize.Format(h.RequestBytes)))
		if h.Base != nil {
			parts = append(parts, "growth "+bytesize.FormatDelta(h.Base.GrowthBytes))
		}
	}
	if g := r.Goroutines; g != nil {
		parts = append(parts, fmt.Sprintf("%d goroutines, %d carrying request labels off the request path", g.Total, g.Captured))
	}
	if len(r.Gates) > 0 {
		parts = append(parts, "no gate tripped")
	}
	return strings.Join(parts, "; ")
}

// escapeData escapes the message of a workflow command.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a property value of a workflow command.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
