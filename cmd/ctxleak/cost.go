package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ctxleak/ctxleak/cost"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/spf13/cobra"
)

// costFlags are the flags of "ctxleak cost".
type costFlags struct {
	format   string
	count    int
	quick    bool
	duration time.Duration
	base     string
	list     bool
}

func newCostCmd(a *app) *cobra.Command {
	var f costFlags
	cmd := &cobra.Command{
		Use:   "cost [NAME...]",
		Short: "Measure what carrying a request context costs: time, allocations, memory per pending operation, server throughput",
		Long: `Measure what carrying a request context costs in Go (all rows, or the ones
named): time and allocations per operation, heap and stack per pending
operation, and the throughput and latency of a net/http server on
127.0.0.1 driven by vegeta, 10 connections.

Each row is measured --count times, each time in another child process
(ctxleak re-executing itself), the runs interleaved: a run has one child
for all the operation rows, one per pending row, and one for the server
rows, whose handlers take turns under load in 100ms slices. The table
shows the median and its 95% confidence interval (golang.org/x/perf/
benchmath, as benchstat); a server row's throughput is also given over
that of the arguments handler, which cancels the machine's pace. Figures other runtimes published (Node, Bun, Python) are
printed beside the Go rows they compare with, marked "elsewhere", with
whether the two are comparable.

--duration is the load time of each server row, split between its runs.
--quick measures less per sample, 6 runs unless --count is given, all
the rows of a run in one child process (under 10s in all).

With --base FILE.json (an earlier "--format json" output) the timings are
compared with it, benchstat's rule: exit 1 when a row is slower beyond its
interval (Mann-Whitney U test, p < 0.05, and the new median outside the
base's interval), 0 otherwise, 2 on a bad base file.`,
		Example: `  # every row, about a minute
  ctxleak cost

  # a few rows, quickly
  ctxleak cost with-value value-depth-100 --quick

  # gate CI on an earlier run
  ctxleak cost --format json > base.json
  ctxleak cost --base base.json`,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return cost.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !changed(cmd.Flags(), "count") && f.quick {
				f.count = cost.MinCount
			}
			if !changed(cmd.Flags(), "duration") && f.quick {
				f.duration = time.Duration(f.count) * cost.QuickSettings.LoadTime
			}
			return a.cost(cmd.Context(), f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.list, "list", false, "list the rows and what each measures, run nothing")
	fl.StringVar(&f.format, "format", "text", "output format: text or json")
	fl.IntVar(&f.count, "count", cost.DefaultCount, fmt.Sprintf("runs of each row (at least %d; %d with --quick)", cost.MinCount, cost.MinCount))
	fl.BoolVar(&f.quick, "quick", false, "shorter samples (2ms per operation sample, 5,000 pending items, 100ms of load per server row\nand run), 6 runs, all rows of a run in one child")
	fl.DurationVar(&f.duration, "duration", 5*time.Second, "load time of each server row, split between its runs")
	fl.StringVar(&f.base, "base", "", "compare the timings with an earlier --format json output `FILE`; exit 1 when slower")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(
		[]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// cost is "ctxleak cost".
func (a *app) cost(ctx context.Context, f costFlags, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := oneOf("format", f.format, "text", "json"); err != nil {
		return err
	}
	if f.count < cost.MinCount {
		return usageErrorf("invalid --count %d: want at least %d (a 95%% interval of a median needs %d runs)",
			f.count, cost.MinCount, cost.MinCount)
	}
	if f.duration <= 0 {
		return usageErrorf("invalid --duration %v: want a positive duration such as 5s", f.duration)
	}
	list, err := cost.Select(args)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if f.list {
		for _, m := range list {
			fmt.Fprintf(a.stdout, "%-24s %-8s %s\n", m.Name, m.Kind, m.Description)
		}
		return nil
	}
	var base *cost.Report
	const maxCostBase = 16 << 20
	if err := checkInputs("base", f.base); err != nil {
		return err
	}
	if f.base != "" {
		fh, err := os.Open(f.base)
		if err != nil {
			return usageErrorf("--base: %v", err)
		}
		if hint := fileKindHint(fh); hint != "" {
			fh.Close()
			return usageErrorf("--base %s: not a cost report%s", f.base, hint)
		}
		// A cost report is a few KiB: a larger file is not one, and
		// decoding it whole would take memory in proportion.
		if st, err := fh.Stat(); err == nil && st.Size() > maxCostBase {
			fh.Close()
			return usageErrorf("--base %s: %s, over the %s a cost report can be: not a cost report", f.base,
				bytesize.Format(st.Size()), bytesize.Format(maxCostBase))
		}
		base, err = cost.ReadJSON(io.LimitReader(fh, maxCostBase))
		fh.Close()
		if err != nil {
			return usageErrorf("--base %s: %v", f.base, err)
		}
	}

	s := cost.DefaultSettings
	if f.quick {
		s = cost.QuickSettings
	}
	s.LoadTime = (f.duration / time.Duration(f.count)).Round(time.Millisecond)
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the ctxleak binary to run the measurements: %w", err)
	}
	runner := &cost.Runner{
		Command:  costChildCommand(exe),
		Settings: s,
		Count:    f.count,
		Batch:    f.quick,
		Timeout:  2*time.Minute + s.LoadTime,
		Progress: func(run int, names []string) {
			if ui.IsTerminal(a.stderr) {
				fmt.Fprintf(a.stderr, "\rrun %d/%d: %-40s", run+1, f.count, strings.Join(names, ", "))
			}
		},
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := runner.Run(ctx, list)
	if ui.IsTerminal(a.stderr) {
		fmt.Fprintf(a.stderr, "\r%-60s\r", "")
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	if err != nil {
		return err
	}

	if f.format == "json" {
		if err := rep.WriteJSON(a.stdout); err != nil {
			return err
		}
	} else if err := rep.WriteText(a.stdout); err != nil {
		return err
	}
	if base == nil {
		return nil
	}
	changes, err := cost.Compare(base, rep)
	if err != nil {
		return usageErrorf("--base %s: %v", f.base, err)
	}
	out := a.stdout
	if f.format == "json" {
		out = a.stderr
	}
	fmt.Fprintln(out)
	if err := cost.WriteCompareText(out, changes); err != nil {
		return err
	}
	if slower := cost.Slower(changes); len(slower) > 0 {
		var names []string
		for _, c := range slower {
			names = append(names, c.Row+" "+c.Figure)
		}
		return findingsErrorf("%d slower than the base beyond its interval: %s", len(slower), strings.Join(names, ", "))
	}
	return nil
}

// costChildCmd is the name of the hidden subcommand "ctxleak cost" runs
// each measurement in.
const costChildCmd = "__cost"

// costChildCommand returns the Runner's Command: this binary re-executed as
// "ctxleak __cost NAME... --op-time D --pending N --load-time D", argv[0]
// "ctxleak" (see childCommand).
func costChildCommand(exe string) func(context.Context, []string, cost.Settings) *exec.Cmd {
	return func(ctx context.Context, names []string, s cost.Settings) *exec.Cmd {
		args := append([]string{costChildCmd}, names...)
		args = append(args, "--op-time", s.OpTime.String(), "--pending", fmt.Sprint(s.Pending),
			"--load-time", s.LoadTime.String())
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Args[0] = "ctxleak"
		return cmd
	}
}

// newCostChildCmd is the hidden command "ctxleak cost" re-executes to
// measure rows in a process of their own; it writes one JSON line per row.
func newCostChildCmd(a *app) *cobra.Command {
	s := cost.DefaultSettings
	cmd := &cobra.Command{
		Use:    costChildCmd + " NAME...",
		Short:  "Measure rows in this process and print each sample as JSON (used by 'ctxleak cost')",
		Hidden: true,
		Args:   rangeArgs(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := s.Check(); err != nil {
				return usageErrorf("%v", err)
			}
			if _, err := cost.Select(args); err != nil {
				return usageErrorf("%v", err)
			}
			return cost.RunChild(a.stdout, args, s)
		},
	}
	cmd.Flags().DurationVar(&s.OpTime, "op-time", s.OpTime, "benchmark time of an operation sample")
	cmd.Flags().IntVar(&s.Pending, "pending", s.Pending, "items pending at once")
	cmd.Flags().DurationVar(&s.LoadTime, "load-time", s.LoadTime, "load time of a server sample")
	return cmd
}
