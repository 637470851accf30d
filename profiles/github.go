package profiles

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// WriteGitHub writes GitHub Actions workflow commands: one ::error
// annotation per finding that trips a gate, at its line, or one ::notice
// that sums the report up when no gate tripped. The findings of a gate are
// the fewest of its largest sites (or goroutine groups) that together go
// over its limit; only those at files of the user's code are annotated
// (see [InModule]), each once even when it trips two gates. A gate that
// trips with no such finding gets one ::error without a file. The rest
// belongs in the step summary ([Report.WriteMarkdown]). Files under
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
	tripped := false
	var findings []*finding
	byPos := map[binsym.Position]*finding{}
	add := func(g GateResult, pos binsym.Position, msg string) bool {
		if !InModule(pos, workspace) {
			return false
		}
		f, ok := byPos[pos]
		if !ok {
			f = &finding{pos: pos}
			byPos[pos] = f
			findings = append(findings, f)
		}
		f.gates = append(f.gates, g.Gate)
		f.msgs = append(f.msgs, msg+"; trips "+r.Setting(g))
		return true
	}
	for _, g := range r.Gates {
		if !g.Tripped {
			continue
		}
		tripped = true
		placed := false
		switch g.Gate {
		case GateGrowth:
			sites := byGrowth(r.Heap.Sites)
			for _, s := range overLimit(sites, g.Limit, func(s AllocSite) int64 { return s.Growth.Bytes }) {
				msg := fmt.Sprintf("%s: heap in use grew by %s (%s) against the base",
					s.Function, bytesize.FormatDelta(s.Growth.Bytes), english.PluralDelta(s.Growth.Objects, "object"))
				if r.Heap.Base.Requests > 0 {
					msg += fmt.Sprintf(", %s per request", bytesize.FormatDelta(int64(s.Growth.PerRequestBytes)))
				}
				if s.Request {
					msg += ", allocated on a request path"
				}
				placed = add(g, s.Position, msg) || placed
			}
		case GateRetained:
			sites := byRequestBytes(r.Heap.Sites)
			for _, s := range overLimit(sites, g.Limit, func(s AllocSite) int64 { return s.RequestBytes }) {
				msg := fmt.Sprintf("%s: %s in %s allocated on a request path is still in use",
					s.Function, bytesize.Format(s.RequestBytes), english.Plural(int(s.RequestObjects), "object"))
				placed = add(g, s.Position, msg) || placed
			}
		case GateGoroutines:
			var captured []GoroutineGroup
			for _, gr := range r.Goroutines.Groups {
				if gr.Captured {
					captured = append(captured, gr)
				}
			}
			for _, gr := range overLimit(captured, g.Limit, func(gr GoroutineGroup) int64 { return gr.Count }) {
				msg := fmt.Sprintf("%s started in %s, waiting in %s, still carry request labels (%s)",
					english.Plural(int(gr.Count), "goroutine"), gr.Start.Function, gr.Wait.Function, strings.Join(gr.LabelKeys, ", "))
				placed = add(g, gr.Wait, msg) || placed
			}
		case GateLeaked:
			for _, gr := range overLimit(r.Leaked.Groups, g.Limit, func(gr GoroutineGroup) int64 { return gr.Count }) {
				msg := fmt.Sprintf("%s started in %s are leaked for ever, blocked in %s",
					english.Plural(int(gr.Count), "goroutine"), gr.Start.Function, gr.Wait.Function)
				if gr.BlockedOn != "" {
					msg += " on " + gr.BlockedOn
				}
				placed = add(g, gr.Wait, msg) || placed
			}
		}
		if !placed {
			annotate("error", nil, "ctxleak: "+g.Gate+" gate", fmt.Sprintf("%s (%s)", g.Reason, r.Setting(g)))
		}
	}
	for _, f := range findings {
		annotate("error", &f.pos, "ctxleak: "+strings.Join(f.gates, " and ")+" gate", strings.Join(f.msgs, "; "))
	}
	if !tripped {
		annotate("notice", nil, r.title(), r.summaryLine())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// finding is one place that trips one or more gates: its annotation.
type finding struct {
	pos   binsym.Position
	gates []string
	msgs  []string
}

// maxFindings caps the findings of one gate: the fewest that go over a
// small limit can be many.
const maxFindings = 10

// overLimit returns the findings of a tripped gate: the first of items
// (largest first) whose values add up to more than limit, at most
// maxFindings. Items of no positive value are never findings.
func overLimit[T any](items []T, limit int64, value func(T) int64) []T {
	var sum int64
	for i, it := range items {
		v := value(it)
		if v <= 0 || i == maxFindings {
			return items[:i]
		}
		sum += v
		if sum > limit {
			return items[:i+1]
		}
	}
	return items
}

// InModule reports whether pos is in the user's code, where an annotation
// can point: not in the standard library (a package whose import path has
// no dot in its first element, at ".../src/<import path>/" under GOROOT),
// not a dependency (in the module cache, ".../pkg/mod/...", or vendored)
// and, when workspace is given, under it.
func InModule(pos binsym.Position, workspace string) bool {
	file := filepath.ToSlash(pos.File)
	if file == "" || isStd(pos.Function, file) || strings.Contains(file, "/pkg/mod/") || strings.Contains(file, "/vendor/") {
		return false
	}
	if workspace == "" {
		return true
	}
	return strings.HasPrefix(file, strings.TrimSuffix(filepath.ToSlash(workspace), "/")+"/")
}

// isStd reports whether fn, at file, is a function of the standard
// library: "runtime.malg" at ".../src/runtime/proc.go".
func isStd(fn, file string) bool {
	path := importPath(fn)
	first, _, _ := strings.Cut(path, "/")
	return path != "main" && !strings.Contains(first, ".") && strings.Contains(file, "/src/"+path+"/")
}

// importPath returns the import path of function fn's package:
// "net/http" for "net/http.(*conn).serve".
func importPath(fn string) string {
	dir, rest := "", fn
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		dir, rest = fn[:i+1], fn[i+1:]
	}
	pkg, _, _ := strings.Cut(rest, ".")
	return dir + pkg
}

// byGrowth returns the sites that grew, most growth first.
func byGrowth(sites []AllocSite) []AllocSite {
	var out []AllocSite
	for _, s := range sites {
		if s.Growth != nil && s.Growth.Bytes > 0 {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(x, y AllocSite) int { return cmp.Compare(y.Growth.Bytes, x.Growth.Bytes) })
	return out
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
func escapeData(s string) string { return textsafe.GitHubData(s) }

// escapeProperty escapes a property value of a workflow command.
func escapeProperty(s string) string { return textsafe.GitHubProperty(s) }
