package profiles

import (
	"fmt"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// Report is one analysis of heap and goroutine profiles and the outcome of
// its gates, ready to render: [Report.WriteText] for people,
// [Report.WriteJSON] for programs, [Report.WriteGitHub] and
// [Report.WriteMarkdown] for GitHub Actions.
type Report struct {
	// Inputs are the profiles read, in the order given, bases last.
	Inputs []Input
	// Heap is nil without a heap profile; Goroutines is nil without a
	// goroutine profile.
	Heap       *HeapReport
	Goroutines *GoroutineReport
	// Leaked groups the goroutines of goroutineleak profiles (Go 1.27),
	// which the runtime proved leaked; nil without one.
	Leaked *GoroutineReport
	// Gates are the outcomes of Gates.Check, in its order.
	Gates []GateResult
	// Settings are what made the report; they also say how much of it to
	// show.
	Settings Settings
	// GateSetting names what set a gate's limit, such as a command-line
	// flag and its value; nil names the gate and its limit.
	GateSetting func(GateResult) string
	// Title names what made the report, such as the command that ran, in
	// the Markdown summary's heading and the GitHub notice; "" means
	// "pprof analysis".
	Title string
}

// Role says what a profile is to a report.
type Role string

// The roles of a report's inputs.
const (
	RoleProfile Role = "profile" // a profile analyzed
	RoleBase    Role = "base"    // a base heap profile compared with
)

// Input describes one profile a report was made from.
type Input struct {
	// Source is the file name or URL as the user gave it.
	Source string `json:"source"`
	Role   Role   `json:"role"`
	Kind   Kind   `json:"kind"`
	Format Format `json:"format"`
	// Time is when the profile was taken, "" if it does not say (RFC 3339).
	Time string `json:"time"`
	// Samples counts the profile's samples.
	Samples int `json:"sample_count"`
}

// NewInput describes p in the given role.
func NewInput(p *Profile, role Role) Input {
	in := Input{Source: p.Source, Role: role, Kind: p.Kind, Format: p.Format, Samples: len(p.Prof.Sample)}
	if p.Prof.TimeNanos != 0 {
		in.Time = time.Unix(0, p.Prof.TimeNanos).UTC().Format(time.RFC3339Nano)
	}
	return in
}

// Settings are the settings a report was made with, as the user gave them.
// WriteJSON echoes them; Top, FullStack, LabelValues and RequestLabels
// also say what the other formats show.
type Settings struct {
	// Top is how many sites and goroutine groups to show; 0 shows all.
	Top int `json:"top"`
	// By, FullStack and LabelValues are those of the Options.
	By          Granularity `json:"by"`
	FullStack   bool        `json:"full_stack"`
	LabelValues bool        `json:"label_values"`
	// Focus and Ignore are the expressions of Options.Focus and
	// Options.Ignore, "" for none.
	Focus  string `json:"focus"`
	Ignore string `json:"ignore"`
	// Helpers are the expressions of functions treated as allocation
	// helpers besides the built-in list.
	Helpers []string `json:"helpers"`
	// RequestPaths are the expressions of request path functions; none
	// means DefaultRequestPath.
	RequestPaths []string `json:"request_paths"`
	// RequestLabels are the request label keys; none means
	// DefaultRequestLabels.
	RequestLabels []string `json:"request_labels"`
	// Requests is Options.Requests.
	Requests int64 `json:"request_count"`
}

// requestLabels returns the request label keys in use.
func (s Settings) requestLabels() []string {
	if len(s.RequestLabels) == 0 {
		return DefaultRequestLabels
	}
	return s.RequestLabels
}

// requestPaths returns the request path expressions in use.
func (s Settings) requestPaths() []string {
	if len(s.RequestPaths) == 0 {
		return []string{DefaultRequestPath.String()}
	}
	return s.RequestPaths
}

// title returns Title or its default.
func (r *Report) title() string {
	if r.Title == "" {
		return "pprof analysis"
	}
	return r.Title
}

// sources returns the sources of the inputs of one kind and role.
func (r *Report) sources(kind Kind, role Role) []string {
	var out []string
	for _, in := range r.Inputs {
		if in.Kind == kind && in.Role == role {
			out = append(out, in.Source)
		}
	}
	return out
}

// Setting names what set a gate: GateSetting's answer, or the gate and
// its limit.
func (r *Report) Setting(g GateResult) string {
	if r.GateSetting != nil {
		return r.GateSetting(g)
	}
	if IsCountGate(g.Gate) {
		return fmt.Sprintf("%s limit %d", g.Gate, g.Limit)
	}
	return fmt.Sprintf("%s limit %s", g.Gate, bytesize.Compact(bytesize.Size(g.Limit)))
}

// Reasons returns why the report fails: the reason of each gate that
// tripped, with its setting in parentheses. None means it passes.
func (r *Report) Reasons() []string {
	out := []string{}
	for _, g := range r.Gates {
		if g.Tripped {
			out = append(out, fmt.Sprintf("%s (%s)", g.Reason, r.Setting(g)))
		}
	}
	return out
}

// topSites returns the sites to show.
func (r *Report) topSites() []AllocSite {
	return topN(r.Heap.Sites, r.Settings.Top)
}

func topN[T any](s []T, n int) []T {
	if n > 0 && len(s) > n {
		return s[:n]
	}
	return s
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", float64(part)*100/float64(whole))
}
