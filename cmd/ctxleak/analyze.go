package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/ctxleak/ctxleak/profiles"
	"github.com/spf13/cobra"
)

// analyzeFlags are the flags of "ctxleak analyze".
type analyzeFlags struct {
	base          string
	format        string
	top           int
	focus, ignore string
	fullStack     bool
	by            string
	helpers       []string
	request       []string
	requestLabels []string
	showLabels    bool
	requests      int64
	httpTimeout   time.Duration

	failOnGrowth     bytesize.Size
	failOnRetained   bytesize.Size
	failOnGoroutines int64
}

func newAnalyzeCmd(a *app) *cobra.Command {
	var f analyzeFlags
	cmd := &cobra.Command{
		Use:   "analyze PROFILE|URL... [--base PROFILE|URL]",
		Short: "Read pprof heap and goroutine profiles: what stays in use, what grows, who carries the request",
		Long: `Analyze reads pprof heap and goroutine profiles, from files or from the
net/http/pprof endpoints of a running process, and reports:

  - heap memory in use (inuse_space, inuse_objects) by allocation site: the
    first frame that is not the runtime or an allocation helper (make,
    append, bytes.Buffer, io.ReadAll, fmt.Sprintf, context.With*, ...);
  - the part allocated on a request path (net/http's connection and
    handler functions, or --request) that is still in use;
  - with --base, the growth of each site, new sites, and with --requests,
    the growth per request;
  - goroutines grouped by the function they started in, where they wait and
    their pprof label keys; those carrying a request label (request_id, or
    --request-label) off the request path are captured request contexts.

Profiles may be gzipped or plain profile.proto, or the legacy debug=1 text.
For a URL ending in /heap or /allocs, gc=1 is added so the server collects
garbage first; goroutine URLs are read in proto form, which has labels.
Several profiles of one kind add up, as in go tool pprof.

The --fail-on-* gates make it a CI check: exit 1 when one trips, with the
reason as the last line; exit 2 for bad flags or unreadable input.`,
		Example: `  ctxleak analyze heap.pb.gz
  ctxleak analyze --base before.pb.gz after.pb.gz --requests 10000 --fail-on-growth 5MiB
  ctxleak analyze http://localhost:6060/debug/pprof/heap http://localhost:6060/debug/pprof/goroutine \
      --fail-on-retained 64MiB --fail-on-goroutines 0 --format github`,
		Args: rangeArgs(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runAnalyze(cmd, f, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.base, "base", "", "heap profile or URL to compare with: growth per site")
	fs.StringVar(&f.format, "format", "text", "output format: text, json or github")
	fs.IntVar(&f.top, "top", 10, "sites and goroutine groups to show (0: all)")
	fs.StringVar(&f.focus, "focus", "", "keep only samples with a frame whose function or file matches `REGEX`")
	fs.StringVar(&f.ignore, "ignore", "", "drop samples with a frame whose function or file matches `REGEX`")
	fs.BoolVar(&f.fullStack, "full-stack", false, "one site per distinct stack, and show the whole stacks")
	fs.StringVar(&f.by, "by", "line", "what a site is: line (function and line) or function")
	fs.StringArrayVar(&f.helpers, "helper", nil, "also treat functions matching `REGEX` as allocation helpers (repeatable)")
	fs.StringArrayVar(&f.request, "request", nil, "a request path is a frame whose function matches `REGEX` (repeatable; replaces the net/http default)")
	fs.StringArrayVar(&f.requestLabels, "request-label", nil, "pprof label `KEY` that marks request goroutines (repeatable; default request_id)")
	fs.BoolVar(&f.showLabels, "show-labels", false, "show label values, not only keys (they may be sensitive)")
	fs.Int64Var(&f.requests, "requests", 0, "requests served between --base and the profile: growth per request")
	fs.DurationVar(&f.httpTimeout, "http-timeout", profiles.DefaultTimeout, "time limit for fetching each URL")
	fs.Var(bytesize.NewFlag(&f.failOnGrowth, 0), "fail-on-growth", "exit 1 if heap in use grew by more than `SIZE` against --base")
	fs.Var(bytesize.NewFlag(&f.failOnRetained, 0), "fail-on-retained", "exit 1 if more than `SIZE` allocated on request paths is still in use")
	fs.Int64Var(&f.failOnGoroutines, "fail-on-goroutines", 0, "exit 1 if more than `N` goroutines off the request path carry request labels")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(
		[]string{"text", "json", "github"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("by", cobra.FixedCompletions(
		[]string{"line", "function"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// analysis is everything analyze found, ready to print.
type analysis struct {
	flags      analyzeFlags
	inputs     []inputDoc
	heap       *profiles.HeapReport
	goroutines *profiles.GoroutineReport
	gates      []profiles.GateResult
	// heapSources, baseSources and goroutineSources name the inputs.
	heapSources, baseSources, goroutineSources []string
}

func (a *app) runAnalyze(cmd *cobra.Command, f analyzeFlags, args []string) error {
	fs := cmd.Flags()
	if err := oneOf("format", f.format, "text", "json", "github"); err != nil {
		return err
	}
	if err := oneOf("by", f.by, "line", "function"); err != nil {
		return err
	}
	if f.top < 0 {
		return usageErrorf("invalid --top %d: want 0 (all) or more", f.top)
	}
	if f.requests < 0 {
		return usageErrorf("invalid --requests %d: want a count of requests", f.requests)
	}
	if f.httpTimeout <= 0 {
		return usageErrorf("invalid --http-timeout %v: want a positive duration such as 30s", f.httpTimeout)
	}
	if f.base == "" {
		for _, name := range []string{"requests", "fail-on-growth"} {
			if changed(fs, name) {
				return usageErrorf("--%s needs --base, the heap profile to compare with", name)
			}
		}
	}
	if changed(fs, "fail-on-goroutines") && f.failOnGoroutines < 0 {
		return usageErrorf("invalid --fail-on-goroutines %d: want 0 or more", f.failOnGoroutines)
	}
	opt, err := f.options()
	if err != nil {
		return err
	}

	loader := &profiles.Loader{Timeout: f.httpTimeout}
	var prog *progress
	if ui.IsTerminal(a.stderr) {
		prog = &progress{w: a.stderr}
		loader.Progress = prog.report
	}
	load := func(source string) (*profiles.Profile, error) {
		p, err := loader.Load(cmd.Context(), source)
		prog.clear()
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		return p, nil
	}

	an := &analysis{flags: f}
	var heaps, bases, goroutines []*profiles.Profile
	for _, src := range args {
		p, err := load(src)
		if err != nil {
			return err
		}
		an.inputs = append(an.inputs, newInputDoc(p, "profile"))
		switch p.Kind {
		case profiles.Heap:
			heaps = append(heaps, p)
			an.heapSources = append(an.heapSources, src)
		case profiles.Goroutine:
			goroutines = append(goroutines, p)
			an.goroutineSources = append(an.goroutineSources, src)
		}
	}
	if f.base != "" {
		if len(heaps) == 0 {
			return usageErrorf("--base %s: no heap profile among the arguments to compare it with", f.base)
		}
		p, err := load(f.base)
		if err != nil {
			return err
		}
		if p.Kind != profiles.Heap {
			return usageErrorf("--base %s: a %s profile; --base takes a heap profile", f.base, p.Kind)
		}
		an.inputs = append(an.inputs, newInputDoc(p, "base"))
		bases = append(bases, p)
		an.baseSources = append(an.baseSources, f.base)
	}
	if changed(fs, "fail-on-retained") && len(heaps) == 0 {
		return usageErrorf("--fail-on-retained needs a heap profile among the arguments")
	}
	if changed(fs, "fail-on-goroutines") && len(goroutines) == 0 {
		return usageErrorf("--fail-on-goroutines needs a goroutine profile among the arguments (/debug/pprof/goroutine)")
	}

	if len(heaps) > 0 {
		if an.heap, err = profiles.AnalyzeHeap(heaps, bases, opt); err != nil {
			return usageErrorf("%v", err)
		}
	}
	if len(goroutines) > 0 {
		if an.goroutines, err = profiles.AnalyzeGoroutines(goroutines, opt); err != nil {
			return usageErrorf("%v", err)
		}
	}
	var gates profiles.Gates
	if changed(fs, "fail-on-growth") {
		gates.Growth = ptr(int64(f.failOnGrowth))
	}
	if changed(fs, "fail-on-retained") {
		gates.Retained = ptr(int64(f.failOnRetained))
	}
	if changed(fs, "fail-on-goroutines") {
		gates.Goroutines = ptr(f.failOnGoroutines)
	}
	if an.gates, err = gates.Check(an.heap, an.goroutines); err != nil {
		return usageErrorf("%v", err)
	}

	switch f.format {
	case "json":
		err = an.writeJSON(a.stdout)
	case "github":
		an.writeText(a.printer(a.stdout))
		err = an.writeGitHub(a.stdout, os.Getenv("GITHUB_STEP_SUMMARY"), os.Getenv("GITHUB_WORKSPACE"))
	default:
		an.writeText(a.printer(a.stdout))
	}
	if err != nil {
		return err
	}
	if reasons := an.tripped(); len(reasons) > 0 {
		return findingsErrorf("%s", strings.Join(reasons, "; "))
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// options turns the flags into analysis options.
func (f analyzeFlags) options() (profiles.Options, error) {
	opt := profiles.Options{
		By:          profiles.Granularity(f.by),
		FullStack:   f.fullStack,
		LabelValues: f.showLabels,
		Requests:    f.requests,
	}
	var err error
	if opt.Focus, err = compileFlag("focus", f.focus); err != nil {
		return opt, err
	}
	if opt.Ignore, err = compileFlag("ignore", f.ignore); err != nil {
		return opt, err
	}
	if len(f.helpers) > 0 {
		re, err := compileFlag("helper", f.helpers...)
		if err != nil {
			return opt, err
		}
		opt.Helper = func(fn string) bool { return profiles.IsHelper(fn) || re.MatchString(fn) }
	}
	if len(f.request) > 0 {
		if opt.Request, err = compileFlag("request", f.request...); err != nil {
			return opt, err
		}
	}
	for _, k := range f.requestLabels {
		if strings.TrimSpace(k) == "" {
			return opt, usageErrorf("invalid --request-label %q: want a label key such as request_id", k)
		}
	}
	if len(f.requestLabels) > 0 {
		opt.RequestLabels = f.requestLabels
	}
	return opt, nil
}

// compileFlag compiles the regexps given to a flag into one that matches
// any of them; none gives nil.
func compileFlag(flag string, exprs ...string) (*regexp.Regexp, error) {
	var alts []string
	for _, e := range exprs {
		if e == "" {
			continue
		}
		if _, err := regexp.Compile(e); err != nil {
			return nil, usageErrorf("invalid --%s %q: %v", flag, e, err)
		}
		alts = append(alts, "(?:"+e+")")
	}
	if len(alts) == 0 {
		return nil, nil
	}
	return regexp.MustCompile(strings.Join(alts, "|")), nil
}

// tripped returns the reasons of the gates that tripped, each naming its
// flag.
func (an *analysis) tripped() []string {
	var out []string
	for _, g := range an.gates {
		if g.Tripped {
			out = append(out, fmt.Sprintf("%s (%s)", g.Reason, an.gateFlag(g)))
		}
	}
	return out
}

// gateFlag returns the flag and value that set a gate.
func (an *analysis) gateFlag(g profiles.GateResult) string {
	if g.Gate == profiles.GateGoroutines {
		return fmt.Sprintf("--fail-on-goroutines %d", g.Limit)
	}
	return fmt.Sprintf("--fail-on-%s %s", g.Gate, bytesize.Compact(bytesize.Size(g.Limit)))
}

// topSites returns the sites to show.
func (an *analysis) topSites() []profiles.Site {
	return topN(an.heap.Sites, an.flags.top)
}

func topN[T any](s []T, n int) []T {
	if n > 0 && len(s) > n {
		return s[:n]
	}
	return s
}

// progress draws one status line on a terminal while profiles load.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	last  time.Time
	shown bool
}

func (p *progress) report(pr profiles.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.shown && now.Sub(p.last) < 100*time.Millisecond && pr.Phase != "parse" {
		return
	}
	p.last = now
	p.shown = true
	var what string
	switch pr.Phase {
	case "download":
		what = "downloading"
	case "read":
		what = "reading"
	case "decompress":
		what = "decompressing"
	default:
		what = "parsing"
	}
	msg := fmt.Sprintf("ctxleak: %s %s", what, pr.Source)
	if pr.Phase != "parse" {
		msg += " " + bytesize.Format(pr.Done)
		if pr.Total > 0 {
			msg += fmt.Sprintf(" of %s (%d%%)", bytesize.Format(pr.Total), min(100, pr.Done*100/pr.Total))
		}
	}
	fmt.Fprintf(p.w, "\r\x1b[2K%s", msg)
}

// clear erases the status line, if one was drawn.
func (p *progress) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[2K")
		p.shown = false
	}
}

// inputDoc describes one input in the JSON document.
type inputDoc struct {
	Source  string `json:"source"`
	Role    string `json:"role"` // "profile" or "base"
	Kind    string `json:"kind"`
	Format  string `json:"format"`
	Time    string `json:"time"` // RFC 3339, "" if the profile has none
	Samples int    `json:"samples"`
}

func newInputDoc(p *profiles.Profile, role string) inputDoc {
	d := inputDoc{Source: p.Source, Role: role, Kind: string(p.Kind), Format: string(p.Format), Samples: len(p.Prof.Sample)}
	if p.Prof.TimeNanos != 0 {
		d.Time = time.Unix(0, p.Prof.TimeNanos).UTC().Format(time.RFC3339Nano)
	}
	return d
}

// The JSON document: one object, stable field order, every section present
// (null when it does not apply).
type analyzeDoc struct {
	Schema     string         `json:"schema"`
	Inputs     []inputDoc     `json:"inputs"`
	Options    optionsDoc     `json:"options"`
	Heap       *heapDoc       `json:"heap"`
	Goroutines *goroutinesDoc `json:"goroutines"`
	Gates      []gateDoc      `json:"gates"`
	Result     string         `json:"result"` // "pass" or "fail"
	Reasons    []string       `json:"reasons"`
}

type optionsDoc struct {
	Top           int      `json:"top"`
	By            string   `json:"by"`
	FullStack     bool     `json:"full_stack"`
	Focus         string   `json:"focus"`
	Ignore        string   `json:"ignore"`
	Helpers       []string `json:"helpers"`
	Request       []string `json:"request"`
	RequestLabels []string `json:"request_labels"`
	ShowLabels    bool     `json:"show_labels"`
	Requests      int64    `json:"requests"`
}

type heapDoc struct {
	*profiles.HeapReport
	Sites      []profiles.Site `json:"sites"`
	SitesTotal int             `json:"sites_total"`
}

type goroutinesDoc struct {
	*profiles.GoroutineReport
	Groups      []profiles.GoroutineGroup `json:"groups"`
	GroupsTotal int                       `json:"groups_total"`
}

type gateDoc struct {
	profiles.GateResult
	Flag string `json:"flag"`
}

// analyzeSchema names the JSON document's layout; it changes only when a
// field is removed or changes meaning.
const analyzeSchema = "ctxleak.analyze/v1"

func (an *analysis) writeJSON(w io.Writer) error {
	f := an.flags
	requestRes := f.request
	if len(requestRes) == 0 {
		requestRes = []string{profiles.DefaultRequestPath.String()}
	}
	labels := f.requestLabels
	if len(labels) == 0 {
		labels = profiles.DefaultRequestLabels
	}
	doc := analyzeDoc{
		Schema: analyzeSchema,
		Inputs: an.inputs,
		Options: optionsDoc{
			Top: f.top, By: f.by, FullStack: f.fullStack, Focus: f.focus, Ignore: f.ignore,
			Helpers: nonNil(f.helpers), Request: requestRes, RequestLabels: labels,
			ShowLabels: f.showLabels, Requests: f.requests,
		},
		Gates:   []gateDoc{},
		Result:  "pass",
		Reasons: nonNil(an.tripped()),
	}
	if an.heap != nil {
		doc.Heap = &heapDoc{HeapReport: an.heap, Sites: nonNil(an.topSites()), SitesTotal: len(an.heap.Sites)}
	}
	if an.goroutines != nil {
		doc.Goroutines = &goroutinesDoc{GoroutineReport: an.goroutines,
			Groups: nonNil(topN(an.goroutines.Groups, f.top)), GroupsTotal: len(an.goroutines.Groups)}
	}
	for _, g := range an.gates {
		doc.Gates = append(doc.Gates, gateDoc{GateResult: g, Flag: an.gateFlag(g)})
	}
	if len(doc.Reasons) > 0 {
		doc.Result = "fail"
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// writeText prints the report for people: summaries, tables of the top
// sites and goroutine groups, and the gates.
func (an *analysis) writeText(p *ui.Printer) {
	sections := 0
	if an.heap != nil {
		an.writeHeapText(p)
		sections++
	}
	if an.goroutines != nil {
		if sections > 0 {
			p.Print("")
		}
		an.writeGoroutinesText(p)
		sections++
	}
	if len(an.gates) > 0 {
		if sections > 0 {
			p.Print("")
		}
		an.writeGatesText(p)
	}
}

func (an *analysis) writeHeapText(p *ui.Printer) {
	h := an.heap
	title := "Heap in use: " + strings.Join(an.heapSources, ", ")
	if h.Base != nil {
		title += " (base: " + strings.Join(an.baseSources, ", ") + ")"
	}
	p.Print(p.Heading(title))
	rows := [][2]string{
		{"in use", fmt.Sprintf("%s in %d objects", bytesize.Format(h.InuseBytes), h.InuseObjects)},
	}
	req := fmt.Sprintf("%s in %d objects (%s of in use), allocated on request paths and still in use",
		bytesize.Format(h.RequestBytes), h.RequestObjects, percent(h.RequestBytes, h.InuseBytes))
	if h.RequestBytes > 0 {
		req = p.Warn(req)
	}
	rows = append(rows, [2]string{"request-scoped", req})
	if g := h.Base; g != nil {
		growth := fmt.Sprintf("%s and %+d objects against the base (%s in %d objects); %d new sites",
			bytesize.FormatDelta(g.GrowthBytes), g.GrowthObjects, bytesize.Format(g.InuseBytes), g.InuseObjects, g.NewSites)
		if g.GrowthBytes > 0 {
			growth = p.Warn(growth)
		}
		rows = append(rows, [2]string{"growth", growth})
		if g.Requests > 0 {
			rows = append(rows, [2]string{"per request", fmt.Sprintf("%s over %d requests",
				bytesize.FormatDelta(int64(g.PerRequestBytes)), g.Requests)})
		}
	}
	printPairs(p, rows)

	sites := an.topSites()
	if len(sites) == 0 {
		return
	}
	order := "in use"
	if h.Base != nil {
		order = "growth"
	}
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
	if an.flags.fullStack {
		t.Headers = append([]string{"#"}, t.Headers...)
		for i := range t.Right {
			t.Right[i]++
		}
		t.Right = append(t.Right, 0)
	}
	for i, s := range sites {
		row := []string{s.Frame.String(), bytesize.Format(s.InuseBytes), fmt.Sprint(s.InuseObjects)}
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
		if an.flags.fullStack {
			row = append([]string{fmt.Sprint(i + 1)}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	p.Print(p.Table(t))
	if an.flags.fullStack {
		printStacks(p, 0, len(sites), func(i int) (string, []profiles.Frame) {
			return sites[i].Frame.String(), sites[i].Stack
		})
	}
}

func (an *analysis) writeGoroutinesText(p *ui.Printer) {
	r := an.goroutines
	labels := an.flags.requestLabels
	if len(labels) == 0 {
		labels = profiles.DefaultRequestLabels
	}
	p.Print(p.Heading("Goroutines: " + strings.Join(an.goroutineSources, ", ")))
	captured := fmt.Sprintf("%d off the request path still carry request labels (%s)", r.Captured, strings.Join(labels, ", "))
	if r.Captured > 0 {
		captured = p.Warn(captured)
	}
	printPairs(p, [][2]string{
		{"goroutines", fmt.Sprintf("%d in %d groups", r.Total, len(r.Groups))},
		{"captured", captured},
		{"in flight", fmt.Sprintf("%d on a request path, serving a request", r.InFlight)},
	})

	var capturedGroups, others []profiles.GoroutineGroup
	for _, g := range r.Groups {
		if g.Captured {
			capturedGroups = append(capturedGroups, g)
		} else {
			others = append(others, g)
		}
	}
	n := 0
	table := func(title string, groups []profiles.GoroutineGroup) {
		if len(groups) == 0 {
			return
		}
		shown := topN(groups, an.flags.top)
		p.Print("")
		p.Print(p.Heading(fmt.Sprintf("%s: top %d of %d groups", title, len(shown), len(groups))))
		t := ui.Table{Headers: []string{"goroutines", "started in", "waiting in", "labels"}, Right: []int{0}}
		if an.flags.fullStack {
			t.Headers = append([]string{"#"}, t.Headers...)
			t.Right = []int{0, 1}
		}
		for _, g := range shown {
			n++
			row := []string{fmt.Sprint(g.Count), g.Start.String(), g.Wait.String(), an.labelsCell(g)}
			if an.flags.fullStack {
				row = append([]string{fmt.Sprint(n)}, row...)
			}
			t.Rows = append(t.Rows, row)
		}
		p.Print(p.Table(t))
		if an.flags.fullStack {
			first := n - len(shown)
			printStacks(p, first, len(shown), func(i int) (string, []profiles.Frame) {
				return shown[i].Start.String(), shown[i].Stack
			})
		}
	}
	table("Captured request contexts", capturedGroups)
	table("Other goroutines", others)
}

// labelsCell lists a group's label keys, with their values under
// --show-labels (at most three per key).
func (an *analysis) labelsCell(g profiles.GoroutineGroup) string {
	if len(g.LabelKeys) == 0 {
		return "-"
	}
	if !an.flags.showLabels {
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

func (an *analysis) writeGatesText(p *ui.Printer) {
	p.Print(p.Heading("Gates"))
	for _, g := range an.gates {
		mark := p.Good("pass")
		if g.Tripped {
			mark = p.Bad("FAIL")
		}
		p.Print(fmt.Sprintf("  %s  %-10s  %s (%s)", mark, g.Gate, g.Reason, an.gateFlag(g)))
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
func printStacks(p *ui.Printer, first, n int, get func(int) (string, []profiles.Frame)) {
	p.Print("")
	for i := range n {
		name, stack := get(i)
		p.Print(p.Bold(fmt.Sprintf("#%d %s", first+i+1, name)))
		for _, f := range stack {
			p.Print("    " + p.Faint(f.Function+" "+fileLine(f)))
		}
	}
}

func fileLine(f profiles.Frame) string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", float64(part)*100/float64(whole))
}

// writeGitHub writes GitHub Actions workflow commands: an ::error
// annotation for the top offenders of each gate that tripped (or one
// ::notice when none did), and appends a Markdown summary to summaryFile
// ($GITHUB_STEP_SUMMARY) when it is set. Files under workspace
// ($GITHUB_WORKSPACE) are given relative to it, as annotations need.
func (an *analysis) writeGitHub(w io.Writer, summaryFile, workspace string) error {
	var b strings.Builder
	annotate := func(level string, f *profiles.Frame, title, msg string) {
		props := []string{}
		if f != nil && f.File != "" {
			file := f.File
			if workspace != "" {
				file = strings.TrimPrefix(file, strings.TrimSuffix(workspace, "/")+"/")
			}
			props = append(props, "file="+escapeProperty(file))
			if f.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", f.Line))
			}
		}
		props = append(props, "title="+escapeProperty(title))
		fmt.Fprintf(&b, "::%s %s::%s\n", level, strings.Join(props, ","), escapeData(msg))
	}
	limit := an.flags.top
	if limit <= 0 || limit > 10 {
		limit = 10
	}
	tripped := false
	for _, g := range an.gates {
		if !g.Tripped {
			continue
		}
		tripped = true
		annotate("error", nil, "ctxleak: "+g.Gate+" gate", fmt.Sprintf("%s (%s)", g.Reason, an.gateFlag(g)))
		switch g.Gate {
		case profiles.GateGrowth:
			for _, s := range topN(an.heap.Sites, limit) {
				if s.Growth.Bytes <= 0 {
					break
				}
				msg := fmt.Sprintf("%s: heap in use grew by %s (%+d objects) against the base",
					s.Function, bytesize.FormatDelta(s.Growth.Bytes), s.Growth.Objects)
				if an.heap.Base.Requests > 0 {
					msg += fmt.Sprintf(", %s per request", bytesize.FormatDelta(int64(s.Growth.PerRequestBytes)))
				}
				if s.Request {
					msg += "; allocated on a request path"
				}
				annotate("error", &s.Frame, "ctxleak: heap growth", msg)
			}
		case profiles.GateRetained:
			for _, s := range topN(byRequestBytes(an.heap.Sites), limit) {
				annotate("error", &s.Frame, "ctxleak: request-scoped memory in use",
					fmt.Sprintf("%s: %s in %d objects allocated on a request path is still in use",
						s.Function, bytesize.Format(s.RequestBytes), s.RequestObjects))
			}
		case profiles.GateGoroutines:
			n := 0
			for _, gr := range an.goroutines.Groups {
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
		annotate("notice", nil, "ctxleak analyze", an.summaryLine())
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if summaryFile == "" {
		return nil
	}
	f, err := os.OpenFile(summaryFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return usageErrorf("GITHUB_STEP_SUMMARY: %v", err)
	}
	_, err = io.WriteString(f, an.markdown())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return usageErrorf("GITHUB_STEP_SUMMARY: %v", err)
	}
	return nil
}

// byRequestBytes returns the request-scoped sites, most request-scoped
// bytes first.
func byRequestBytes(sites []profiles.Site) []profiles.Site {
	var out []profiles.Site
	for _, s := range sites {
		if s.RequestBytes > 0 {
			out = append(out, s)
		}
	}
	// A stable sort keeps the report's order among equals.
	slices.SortStableFunc(out, func(x, y profiles.Site) int { return cmp.Compare(y.RequestBytes, x.RequestBytes) })
	return out
}

// summaryLine says in one line what was found.
func (an *analysis) summaryLine() string {
	var parts []string
	if h := an.heap; h != nil {
		parts = append(parts, fmt.Sprintf("heap in use %s, request-scoped %s", bytesize.Format(h.InuseBytes), bytesize.Format(h.RequestBytes)))
		if h.Base != nil {
			parts = append(parts, "growth "+bytesize.FormatDelta(h.Base.GrowthBytes))
		}
	}
	if g := an.goroutines; g != nil {
		parts = append(parts, fmt.Sprintf("%d goroutines, %d carrying request labels off the request path", g.Total, g.Captured))
	}
	if len(an.gates) > 0 {
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

// markdown renders the step summary.
func (an *analysis) markdown() string {
	var b strings.Builder
	b.WriteString("### ctxleak analyze\n\n")
	if len(an.gates) > 0 {
		for _, g := range an.gates {
			mark := "✅ pass"
			if g.Tripped {
				mark = "❌ **fail**"
			}
			fmt.Fprintf(&b, "- %s %s: %s (`%s`)\n", mark, g.Gate, mdEscape(g.Reason), an.gateFlag(g))
		}
		b.WriteString("\n")
	}
	if h := an.heap; h != nil {
		b.WriteString("| heap | |\n|---|---|\n")
		fmt.Fprintf(&b, "| in use | %s in %d objects |\n", bytesize.Format(h.InuseBytes), h.InuseObjects)
		fmt.Fprintf(&b, "| request-scoped, still in use | %s in %d objects (%s) |\n",
			bytesize.Format(h.RequestBytes), h.RequestObjects, percent(h.RequestBytes, h.InuseBytes))
		if g := h.Base; g != nil {
			fmt.Fprintf(&b, "| growth against the base | %s, %+d objects, %d new sites |\n",
				bytesize.FormatDelta(g.GrowthBytes), g.GrowthObjects, g.NewSites)
			if g.Requests > 0 {
				fmt.Fprintf(&b, "| growth per request | %s over %d requests |\n", bytesize.FormatDelta(int64(g.PerRequestBytes)), g.Requests)
			}
		}
		b.WriteString("\n")
		if sites := an.topSites(); len(sites) > 0 {
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
				fmt.Fprintf(&b, "| `%s` | %s | %d |", mdCode(s.Frame.String()), bytesize.Format(s.InuseBytes), s.InuseObjects)
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
	if g := an.goroutines; g != nil {
		fmt.Fprintf(&b, "**Goroutines:** %d; %d off the request path still carry request labels; %d serving requests.\n\n",
			g.Total, g.Captured, g.InFlight)
		var rows []profiles.GoroutineGroup
		for _, gr := range g.Groups {
			if gr.Captured {
				rows = append(rows, gr)
			}
		}
		if rows = topN(rows, an.flags.top); len(rows) > 0 {
			b.WriteString("| captured goroutines | started in | waiting in | label keys |\n|---:|---|---|---|\n")
			for _, gr := range rows {
				fmt.Fprintf(&b, "| %d | `%s` | `%s` | %s |\n", gr.Count, mdCode(gr.Start.String()),
					mdCode(gr.Wait.String()), mdEscape(strings.Join(gr.LabelKeys, ", ")))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// mdEscape escapes text for a Markdown table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`, "<", "&lt;", "`", "'").Replace(s)
}

// mdCode makes s safe inside a code span in a table cell.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`, "\n", " ").Replace(s)
}
