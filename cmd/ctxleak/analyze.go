package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/textsafe"
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
	maxSize       bytesize.Size

	failOnGrowth     bytesize.Size
	failOnRetained   bytesize.Size
	failOnGoroutines int64
	failOnGoGrowth   int64
	failOnLeaked     int64
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
    --request-label) off the request path are captured request contexts;
  - with a goroutine profile as --base, the goroutines gained by start
    function and wait site, labels or not (profiles do not record where a
    goroutine was created);
  - from Go 1.27's goroutineleak profile (/debug/pprof/goroutineleak), the
    goroutines the runtime proved leaked, by start function and the place
    they are blocked in for ever. A goroutine blocked on a channel that a
    global or a runnable goroutine still reaches is not leaked to it.
    Taking it marks the leaked goroutines for the life of the process, and
    Go 1.27 cannot write a heap dump of a process with marked goroutines:
    fetch a dump (ctxleak holders URL) before this profile, not after.

Profiles may be gzipped or plain profile.proto, or the legacy debug=1 text.
For a URL ending in /heap or /allocs, gc=1 is added so the server collects
garbage first; goroutine URLs are read in proto form, which has labels.
Several profiles of one kind add up, as in go tool pprof. "-" reads one
profile from standard input.

The --fail-on-* gates make it a CI check: exit 1 when one trips, with the
reason as the last line; exit 2 for bad flags or unreadable input.`,
		Example: `  ctxleak analyze heap.pb.gz
  ctxleak analyze --base before.pb.gz after.pb.gz --requests 10000 --fail-on-growth 5MiB
  ctxleak analyze http://localhost:6060/debug/pprof/heap http://localhost:6060/debug/pprof/goroutine \
      --fail-on-retained 64MiB --fail-on-goroutines 0 --format github
  ctxleak analyze http://localhost:6060/debug/pprof/goroutineleak --fail-on-leaked-goroutines 0`,
		Args: rangeArgs(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runAnalyze(cmd, f, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.base, "base", "", "heap or goroutine profile or URL to compare with: growth per site or goroutine group")
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
	fs.Var(bytesize.NewFlag(&f.maxSize, profiles.DefaultMaxBytes), "max-profile-size", "refuse a profile over `SIZE` (file, download or decompressed); decoding the profiles may take 4 times as much memory in all")
	fs.Var(bytesize.NewFlag(&f.failOnGrowth, 0), "fail-on-growth", "exit 1 if heap in use grew by more than `SIZE` against --base")
	fs.Var(bytesize.NewFlag(&f.failOnRetained, 0), "fail-on-retained", "exit 1 if more than `SIZE` allocated on request paths is still in use")
	fs.Int64Var(&f.failOnGoroutines, "fail-on-goroutines", 0, "exit 1 if more than `N` goroutines off the request path carry request labels")
	fs.Int64Var(&f.failOnGoGrowth, "fail-on-goroutine-growth", 0, "exit 1 if goroutines grew by `N` or more against a goroutine --base")
	fs.Int64Var(&f.failOnLeaked, "fail-on-leaked-goroutines", 0, "exit 1 if a goroutineleak profile (Go 1.27) has more than `N` leaked goroutines")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(
		[]string{"text", "json", "github"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("by", cobra.FixedCompletions(
		[]string{"line", "function"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) runAnalyze(cmd *cobra.Command, f analyzeFlags, args []string) error {
	fs := cmd.Flags()
	if err := oneOf("format", f.format, "text", "json", "github"); err != nil {
		return err
	}
	if err := oneOf("by", f.by, "line", "function"); err != nil {
		return err
	}
	if err := checkInputs("", args...); err != nil {
		return err
	}
	if err := checkInputs("base", f.base); err != nil {
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
		if changed(fs, "fail-on-goroutine-growth") {
			return usageErrorf("--fail-on-goroutine-growth needs --base, the goroutine profile to compare with")
		}
	}
	if changed(fs, "fail-on-goroutine-growth") && f.failOnGoGrowth < 1 {
		return usageErrorf("invalid --fail-on-goroutine-growth %d: want 1 or more", f.failOnGoGrowth)
	}
	if changed(fs, "fail-on-goroutines") && f.failOnGoroutines < 0 {
		return usageErrorf("invalid --fail-on-goroutines %d: want 0 or more", f.failOnGoroutines)
	}
	if changed(fs, "fail-on-leaked-goroutines") && f.failOnLeaked < 0 {
		return usageErrorf("invalid --fail-on-leaked-goroutines %d: want 0 or more", f.failOnLeaked)
	}
	opt, err := f.options()
	if err != nil {
		return err
	}

	if f.maxSize <= 0 || f.maxSize > profiles.MaxMaxBytes {
		return usageErrorf("invalid --max-profile-size %s: want a positive size such as 256MiB, under 2GiB", bytesize.Compact(f.maxSize))
	}
	tuneGCForProfiles(int64(f.maxSize))
	loader := &profiles.Loader{Timeout: f.httpTimeout, MaxBytes: int64(f.maxSize)}
	prog := a.newProgress()
	if prog != nil {
		loader.Progress = prog.report
	}
	stdinUsed := false
	load := func(source string) (*profiles.Profile, error) {
		if source == stdinName {
			if stdinUsed {
				return nil, usageErrorf("standard input (-) given twice")
			}
			stdinUsed = true
			return a.readStdinProfile(cmd.Context(), loader)
		}
		p, err := loader.Load(cmd.Context(), source)
		prog.clear()
		if cause := context.Cause(cmd.Context()); cause != nil {
			return nil, cause
		}
		if errors.Is(err, profiles.ErrDeltaProfile) {
			return nil, usageErrorf("%s: %v: fetch the profile twice and use --base", source, profiles.ErrDeltaProfile)
		}
		if err != nil {
			if re := heapDumpRefusal(err); re != nil {
				return nil, re
			}
			hint := limitHint(err)
			if hint == "" {
				hint = urlHint(source)
			}
			return nil, usageErrorf("%v%s", err, hint)
		}
		return p, nil
	}

	rep := &profiles.Report{Settings: f.settings(), GateSetting: gateFlag, Title: "ctxleak analyze"}
	var heaps, bases, goroutines, goroutineBases, leaks, leakBases []*profiles.Profile
	for _, src := range args {
		p, err := load(src)
		if err != nil {
			return err
		}
		rep.Inputs = append(rep.Inputs, profiles.NewInput(p, profiles.RoleProfile))
		switch p.Kind {
		case profiles.Heap:
			heaps = append(heaps, p)
		case profiles.Goroutine:
			goroutines = append(goroutines, p)
		case profiles.GoroutineLeak:
			leaks = append(leaks, p)
		}
	}
	if f.base != "" {
		p, err := load(f.base)
		if err != nil {
			return err
		}
		switch {
		case p.Kind == profiles.Heap && len(heaps) > 0:
			bases = append(bases, p)
		case p.Kind == profiles.Goroutine && len(goroutines) > 0:
			goroutineBases = append(goroutineBases, p)
		case p.Kind == profiles.GoroutineLeak && len(leaks) > 0:
			leakBases = append(leakBases, p)
		default:
			return usageErrorf("--base %s: no %s profile among the arguments to compare it with", f.base, p.Kind)
		}
		rep.Inputs = append(rep.Inputs, profiles.NewInput(p, profiles.RoleBase))
	}
	if len(bases) == 0 {
		for _, name := range []string{"requests", "fail-on-growth"} {
			if changed(fs, name) {
				return usageErrorf("--%s needs a heap profile as --base", name)
			}
		}
	}
	if changed(fs, "fail-on-goroutine-growth") && len(goroutineBases) == 0 {
		return usageErrorf("--fail-on-goroutine-growth needs a goroutine profile as --base")
	}
	if changed(fs, "fail-on-retained") && len(heaps) == 0 {
		return usageErrorf("--fail-on-retained needs a heap profile among the arguments")
	}
	if changed(fs, "fail-on-goroutines") && len(goroutines) == 0 {
		return usageErrorf("--fail-on-goroutines needs a goroutine profile among the arguments (/debug/pprof/goroutine)")
	}
	if changed(fs, "fail-on-leaked-goroutines") && len(leaks) == 0 {
		return usageErrorf("--fail-on-leaked-goroutines needs a goroutineleak profile among the arguments (/debug/pprof/goroutineleak, Go 1.27)")
	}

	if len(heaps) > 0 {
		if rep.Heap, err = profiles.AnalyzeHeap(heaps, bases, opt); err != nil {
			return usageErrorf("%v", err)
		}
	}
	if len(goroutines) > 0 {
		if rep.Goroutines, err = profiles.AnalyzeGoroutines(goroutines, opt); err != nil {
			return usageErrorf("%v", err)
		}
		if len(goroutineBases) > 0 {
			base, err := profiles.AnalyzeGoroutines(goroutineBases, opt)
			if err != nil {
				return usageErrorf("%v", err)
			}
			rep.Goroutines.Base = profiles.CompareGoroutines(rep.Goroutines, base)
		}
	}
	if len(leaks) > 0 {
		if rep.Leaked, err = profiles.AnalyzeGoroutines(leaks, opt); err != nil {
			return usageErrorf("%v", err)
		}
		if len(leakBases) > 0 {
			base, err := profiles.AnalyzeGoroutines(leakBases, opt)
			if err != nil {
				return usageErrorf("%v", err)
			}
			rep.Leaked.Base = profiles.CompareGoroutines(rep.Leaked, base)
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
	if changed(fs, "fail-on-goroutine-growth") {
		gates.GoroutineGrowth = ptr(f.failOnGoGrowth)
	}
	if changed(fs, "fail-on-leaked-goroutines") {
		gates.Leaked = ptr(f.failOnLeaked)
	}
	if rep.Gates, err = gates.CheckReport(rep); err != nil {
		return usageErrorf("%v", err)
	}

	if err := a.writeReport(rep, f.format); err != nil {
		return err
	}
	if reasons := rep.Reasons(); len(reasons) > 0 {
		return findingsErrorf("%s", strings.Join(reasons, "; "))
	}
	return nil
}

// writeReport writes rep to standard output in format; for "github" it
// also appends the Markdown summary to $GITHUB_STEP_SUMMARY when set.
func (a *app) writeReport(rep *profiles.Report, format string) error {
	if format == "json" {
		return rep.WriteJSON(a.stdout)
	}
	if format != "github" {
		return rep.WriteText(a.stdout, a.printer(a.stdout).Styled())
	}
	// No line of the report may run as a workflow command.
	var text strings.Builder
	if err := rep.WriteText(&text, a.printer(a.stdout).Styled()); err != nil {
		return err
	}
	if _, err := io.WriteString(a.stdout, textsafe.GitHubVerbatim(text.String())); err != nil {
		return err
	}
	if err := rep.WriteGitHub(a.stdout, os.Getenv("GITHUB_WORKSPACE")); err != nil {
		return err
	}
	name := os.Getenv("GITHUB_STEP_SUMMARY")
	if name == "" {
		return nil
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		err = errors.Join(rep.WriteMarkdown(f), f.Close())
	}
	if err != nil {
		return usageErrorf("GITHUB_STEP_SUMMARY: %v", err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// limitHint says how to raise the cap that refused a profile, or "".
func limitHint(err error) string {
	var le *profiles.LimitError
	if !errors.As(err, &le) {
		return ""
	}
	return fmt.Sprintf(" (raise it with --max-profile-size, now %s)", bytesize.Compact(bytesize.Size(le.MaxBytes)))
}

// options turns the flags into analysis options.
func (f analyzeFlags) options() (opt profiles.Options, err error) {
	opt = profiles.Options{By: profiles.Granularity(f.by), FullStack: f.fullStack, LabelValues: f.showLabels,
		Requests: f.requests, RequestLabels: f.requestLabels}
	for _, k := range f.requestLabels {
		if strings.TrimSpace(k) == "" {
			return opt, usageErrorf("invalid --request-label %q: want a label key such as request_id", k)
		}
	}
	if opt.Focus, err = compileFlag("focus", f.focus); err != nil {
		return opt, err
	}
	if opt.Ignore, err = compileFlag("ignore", f.ignore); err != nil {
		return opt, err
	}
	if opt.Request, err = compileFlag("request", f.request...); err != nil {
		return opt, err
	}
	helpers, err := compileFlag("helper", f.helpers...)
	if helpers != nil {
		opt.Helper = func(fn string) bool { return profiles.IsHelper(fn) || helpers.MatchString(fn) }
	}
	return opt, err
}

// compileFlag compiles the expressions given to a flag into one that
// matches any of them; none gives nil.
func compileFlag(flag string, exprs ...string) (*regexp.Regexp, error) {
	re, err := profiles.MatchAny(exprs...)
	var pe *profiles.PatternError
	if errors.As(err, &pe) {
		return nil, usageErrorf("invalid --%s %q: %v", flag, pe.Pattern, pe.Err)
	}
	return re, err
}

// settings records the flags in the report.
func (f analyzeFlags) settings() profiles.Settings {
	return profiles.Settings{
		Top: f.top, By: profiles.Granularity(f.by), FullStack: f.fullStack, LabelValues: f.showLabels,
		Focus: f.focus, Ignore: f.ignore, Helpers: f.helpers, RequestPaths: f.request,
		RequestLabels: f.requestLabels, Requests: f.requests,
	}
}

// gateFlag returns the flag and value that set a gate.
func gateFlag(g profiles.GateResult) string {
	if profiles.IsCountGate(g.Gate) {
		return fmt.Sprintf("--fail-on-%s %d", g.Gate, g.Limit)
	}
	return fmt.Sprintf("--fail-on-%s %s", g.Gate, bytesize.Compact(bytesize.Size(g.Limit)))
}
