package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/textsafe"
	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/ctxleak/ctxleak/scenarios"
	"github.com/spf13/cobra"
)

// runFlags are the flags of "ctxleak run".
type runFlags struct {
	list    bool
	format  string
	payload bytesize.Size
	tasks   int
	timeout time.Duration
	keep    string
	holders bool
	// holdersSet is whether --holders was given: without it, holders are
	// named only for payloads up to maxHolderPayload.
	holdersSet bool
}

// holdersWanted says whether to name holders, and whether they were
// turned off only because the payload is larger than maxHolderPayload.
func (f *runFlags) holdersWanted() (on, skipped bool) {
	if f.holders && !f.holdersSet && int64(f.payload) > maxHolderPayload {
		return false, true
	}
	return f.holders, false
}

// maxHolderPayload is the largest payload whose holders "ctxleak run" names
// unless told to with --holders: a heap dump holds the payload, so each
// costs as much memory again and, at 1 GiB, takes one to several seconds
// to write, which the timer scenarios cannot wait for.
const maxHolderPayload = 256 << 20

func newRunCmd(a *app) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [NAME...]",
		Short: "Measure which ways of handing a request context to background work keep its payload alive",
		Long: `Run the catalogue of context retention scenarios (all of them, or the
ones named) and show, phase by phase, whether a payload stored in a request
context is still alive.

Each scenario runs in a child process of its own (ctxleak re-executing
itself), so one scenario's garbage never shows in another's figures and a
crash or a hang costs only that scenario. At each phase boundary the child
runs the GC until the state settles (at most 4 cycles), then records:

  payload      alive or freed (a weak pointer to the payload)
  heap         heap in use by objects above the baseline taken before the
               payload existed (runtime/metrics)
  RSS          resident memory above that baseline, read after returning
               freed memory to the OS (debug.FreeOSMemory)
  GC to free   the GC cycles the release took, at the phase where it happened
  alloc site   bytes a pprof heap profile still shows in use where the
               payload was allocated

and, where the payload is still alive, writes a heap dump. Once the child
has exited, ctxleak reads the dump (as "ctxleak holders" does) and names
what keeps the payload alive: the goroutine frame, global, timer or
goroutine label set, and the typed path from it to the payload. Turn this
off with --holders=false; it is off for payloads above 256MiB unless
--holders is given (a dump holds the payload: at 1GiB each takes seconds
to write). Dumps are written mode 0600 into a fresh temporary directory
($TMPDIR, else /dev/shm when it has room, else /tmp) and removed once
read; the directories a killed run left behind (named with its process
ID, owned by you, the process gone) are removed by the next run. A
--payload over half the physical memory is refused.

On Go 1.27 and later the child also takes the goroutineleak profile
(runtime/pprof) and shows, per phase, the goroutines it proves leaked
("leak profile:"), or none. It takes it after the heap dump, and only from
the last phase that writes one on: once the profile has marked a goroutine
leaked, no heap dump of the process can be written. The profile proves
leaked only goroutines blocked on something no runnable goroutine and no
global can reach: one blocked on a channel a global holds (global-cache's
janitor) is never reported.

Each scenario's expected outcome, including who holds the payload and, on
Go 1.27, what the leak profile reports, is written down in the catalogue
and checked. Exit status: 0 when every
scenario behaved as expected, 1 when any did not (or its child crashed or
hung), 2 on a usage error.

With --keep DIR the heap profile of every phase (and of the baseline) is
kept, mode 0600, in a fresh subdirectory DIR/run-YYYYMMDD-HHMMSS (a suffix
is added if that exists; DIR is created if missing), with the heap dumps,
the goroutineleak profiles (Go 1.27+)
and a copy of the executable that wrote them, for "ctxleak holders DUMP
--binary EXE". Existing files are never overwritten.`,
		Example: `  # the whole catalogue, 50 MiB payload, 10 background tasks
  ctxleak run

  # what scenarios are there, and what each shows
  ctxleak run --list

  # two scenarios side by side, with a smaller payload
  ctxleak run request-ctx-tasks empty-ctx-tasks --payload 4MiB

  # machine-readable results, and the heap profiles to open with pprof
  ctxleak run --format json --keep /tmp/ctxleak-profiles > results.json
  go tool pprof -sample_index=inuse_space -top \
      /tmp/ctxleak-profiles/run-*/timer-closure/02-request-returned.pb.gz

  # the whole holder report of a kept heap dump
  ctxleak run timer-closure --keep /tmp/ctxleak-profiles
  ctxleak holders /tmp/ctxleak-profiles/run-*/timer-closure/02-request-returned.heapdump \
      --binary /tmp/ctxleak-profiles/run-*/executable`,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return scenarios.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.holdersSet = changed(cmd.Flags(), "holders")
			return a.run(cmd.Context(), f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.list, "list", false, "list the scenarios and their expected outcomes, run nothing")
	fl.StringVar(&f.format, "format", "text", "output format: text or json")
	fl.Var(bytesize.NewFlag(&f.payload, scenarios.DefaultPayloadBytes), "payload",
		"size of the payload stored in each scenario's context, e.g. 512KiB, 50MiB, 1GiB\n(http-server splits it between its requests)")
	fl.IntVar(&f.tasks, "tasks", scenarios.DefaultTasks, "background tasks per scenario, and requests in http-server (1 to 1000)")
	fl.DurationVar(&f.timeout, "timeout", 60*time.Second, "time limit for each scenario's child process")
	fl.StringVar(&f.keep, "keep", "", "keep every phase's heap profile and heap dump under `DIR`, in a fresh subdirectory")
	fl.BoolVar(&f.holders, "holders", true, "name what holds the payload at each phase where it is alive, from a heap dump\n(above a 256MiB payload, only when given)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(
		[]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// run is "ctxleak run".
func (a *app) run(ctx context.Context, f runFlags, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := oneOf("format", f.format, "text", "json"); err != nil {
		return err
	}
	if f.tasks < 1 || f.tasks > 1000 {
		return usageErrorf("invalid --tasks %d: want 1 to 1000", f.tasks)
	}
	if min := scenarios.MinPayloadBytes * int64(f.tasks); int64(f.payload) < min {
		return usageErrorf("invalid --payload %s: want at least %s (%s per task, --tasks %d)",
			bytesize.Compact(f.payload), bytesize.Compact(bytesize.Size(min)),
			bytesize.Compact(scenarios.MinPayloadBytes), f.tasks)
	}
	if limit, ok := scenarios.MaxPayloadBytes(); ok && int64(f.payload) > limit {
		return usageErrorf("invalid --payload %s: this machine can hold at most %s (half its physical memory)",
			bytesize.Compact(f.payload), bytesize.Format(limit))
	}
	if f.timeout <= 0 {
		return usageErrorf("invalid --timeout %v: want a positive duration such as 30s", f.timeout)
	}
	list, err := selectScenarios(args)
	if err != nil {
		return err
	}
	if f.list {
		return a.listScenarios(f.format, list)
	}

	opts := scenarios.Options{PayloadBytes: int64(f.payload), Tasks: f.tasks}
	report := scenarios.Report{
		PayloadBytes: opts.PayloadBytes,
		Tasks:        opts.Tasks,
		GoVersion:    runtime.Version(),
	}
	if f.keep != "" {
		dir, err := freshRunDir(f.keep, time.Now())
		if err != nil {
			return usageErrorf("--keep: %v", err)
		}
		report.KeepDir = dir
		for _, s := range list {
			if err := os.Mkdir(filepath.Join(report.KeepDir, s.Name), 0o700); err != nil {
				return fmt.Errorf("--keep: %w", err)
			}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the ctxleak binary to run scenarios: %w", err)
	}
	runner := &scenarios.Runner{
		Command: childCommand(exe, report.KeepDir),
		Options: opts,
		Timeout: f.timeout,
	}
	holdersOn, holdersSkipped := f.holdersWanted()
	if holdersOn {
		x, dumps, cleanup, err := a.holderSetup(exe, report.KeepDir, opts.PayloadBytes)
		if err != nil {
			return err
		}
		defer cleanup()
		if x != nil {
			runner.Holders = x
			runner.Options.DumpDir = dumps
			report.Holders = true
		}
	}

	p := a.printer(a.stdout)
	if f.format == "text" {
		p.Print(p.Faint(fmt.Sprintf("payload %s, %d tasks, %s; each scenario in its own process",
			bytesize.Compact(f.payload), f.tasks, runtime.Version())))
		if !scenarios.LeakProfileAvailable() {
			p.Print(p.Faint(fmt.Sprintf("leak profile: n/a (Go 1.27+): %s has no goroutineleak profile, so which goroutines it proves leaked is not shown",
				runtime.Version())))
		}
		if holdersSkipped {
			p.Print(p.Faint(fmt.Sprintf("holders not named: payload above %s, each heap dump would take seconds (--holders to name them)",
				bytesize.Compact(maxHolderPayload))))
		}
	}
	// An interrupt stops the run: the running child is killed, and the
	// heap dumps are removed on the way out.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = runner.RunAll(ctx, list, func(res scenarios.Result) {
		report.Scenarios = append(report.Scenarios, res)
		if f.format == "text" {
			res.WriteText(p)
		}
	})
	if err != nil || ctx.Err() != nil {
		return errors.New("interrupted")
	}

	if f.format == "json" {
		if err := report.WriteJSON(a.stdout); err != nil {
			return err
		}
	} else {
		printSummary(p, &report)
	}
	var bad []string
	for _, r := range report.Scenarios {
		if r.Verdict != scenarios.AsExpected {
			bad = append(bad, r.Name)
		}
	}
	if len(bad) > 0 {
		return findingsErrorf("%d of %s not as expected: %s",
			len(bad), english.Plural(len(report.Scenarios), "scenario"), strings.Join(bad, ", "))
	}
	return nil
}

// holderSetup prepares the search for holders: it opens the executable the
// children run, and makes the directory the children write their heap
// dumps into: keepDir when the dumps are kept (with a copy of the
// executable, for "ctxleak holders"), else a fresh temporary directory that
// cleanup removes. Without a readable executable it warns and returns a nil
// Explainer: the scenarios run without holders.
func (a *app) holderSetup(exe, keepDir string, payload int64) (x *scenarios.Explainer, dumps string, cleanup func(), err error) {
	cleanup = func() {}
	bin, err := openBinary(exe, 0)
	if err != nil {
		fmt.Fprintf(a.stderr, "ctxleak: warning: holders are not named: %s\n", textsafe.Escape(err.Error()))
		return nil, "", cleanup, nil
	}
	x = &scenarios.Explainer{Binary: bin}
	if keepDir != "" {
		x.Keep = true
		if err := copyNew(exe, filepath.Join(keepDir, keptExecutable), 0o700); err != nil {
			return nil, "", cleanup, fmt.Errorf("--keep: copying the executable: %w", err)
		}
		return x, keepDir, func() {}, nil
	}
	dir, err := scenarios.TempDumpDir(payload)
	if err != nil {
		return nil, "", cleanup, fmt.Errorf("a directory for heap dumps: %w", err)
	}
	return x, dir, func() {
		os.RemoveAll(dir)
	}, nil
}

// keptExecutable is the name of the copy of the executable kept with the
// heap dumps.
const keptExecutable = "executable"

// copyNew copies the file src to dst, a new file of mode perm.
func copyNew(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, cerr := io.Copy(out, in)
	return errors.Join(cerr, out.Close())
}

// selectScenarios resolves the names on the command line; none means the
// whole catalogue. An unknown name is a usage error listing the valid ones.
func selectScenarios(names []string) ([]*scenarios.Scenario, error) {
	if len(names) == 0 {
		return scenarios.All(), nil
	}
	var list []*scenarios.Scenario
	seen := map[string]bool{}
	for _, n := range names {
		s, ok := scenarios.Lookup(n)
		if !ok {
			return nil, usageErrorf("unknown scenario %q; valid names: %s",
				n, strings.Join(scenarios.Names(), ", "))
		}
		if !seen[n] {
			seen[n] = true
			list = append(list, s)
		}
	}
	return list, nil
}

// childCommand returns the Runner's Command: this binary re-executed as
// "ctxleak __scenario NAME ...". argv[0] is "ctxleak" whatever the binary is
// called, so that a test binary acting as ctxleak (testscript dispatches on
// the base name of argv[0]) runs the command rather than its tests.
func childCommand(exe, keepDir string) func(context.Context, string, scenarios.Options) *exec.Cmd {
	return func(ctx context.Context, name string, o scenarios.Options) *exec.Cmd {
		args := []string{scenarioChildCmd, name,
			"--payload", strconv.FormatInt(o.PayloadBytes, 10),
			"--tasks", strconv.Itoa(o.Tasks)}
		if keepDir != "" {
			args = append(args, "--keep", filepath.Join(keepDir, name))
		}
		if o.DumpDir != "" {
			args = append(args, "--dumps", o.DumpDir)
		}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Args[0] = "ctxleak"
		return cmd
	}
}

// freshRunDir creates parent if needed and, inside it, a new directory
// named after t that did not exist before, and returns its path.
func freshRunDir(parent string, t time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", err
	}
	base := filepath.Join(parent, "run-"+t.Format("20060102-150405"))
	for i := 1; i <= 100; i++ {
		dir := base
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("no fresh directory name left under %s", parent)
}

// listScenarios prints the catalogue (or the named scenarios) without running it.
func (a *app) listScenarios(format string, list []*scenarios.Scenario) error {
	if format == "json" {
		return scenarios.NewListing(list).WriteJSON(a.stdout)
	}
	scenarios.NewListing(list).WriteText(a.printer(a.stdout))
	return nil
}

// printSummary prints the summary table and closing line, and where the
// kept files are with the commands that read them.
func printSummary(p *ui.Printer, rep *scenarios.Report) {
	rep.WriteSummaryText(p)
	if rep.KeepDir != "" {
		p.Print(p.Faint("heap profiles kept in " + rep.KeepDir + "; open one with: go tool pprof -sample_index=inuse_space FILE"))
		if rep.Holders {
			p.Print(p.Faint("heap dumps kept there too; read one with: ctxleak holders DUMP --binary " +
				filepath.Join(rep.KeepDir, keptExecutable)))
		}
	}
}
