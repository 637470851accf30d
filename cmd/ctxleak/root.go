package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// app holds what every command shares: the output streams and global flags.
type app struct {
	stdout, stderr io.Writer
	color          string // --color: auto, always or never
}

// printer returns a ui.Printer for w honouring --color, NO_COLOR and
// whether w is a terminal.
func (a *app) printer(w io.Writer) *ui.Printer {
	mode, _ := ui.ParseMode(a.color)
	return ui.NewPrinter(w, mode)
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "ctxleak",
		Short: "Find memory kept alive by request contexts and background goroutines",
		Long: `ctxleak finds memory kept alive by request contexts and background
goroutines, and says exactly who holds it.

  ctxleak run        measure the catalogue of context retention patterns,
                     each in its own process
  ctxleak holders    read a heap dump (runtime/debug.WriteHeapDump) and say
                     which goroutine frame, global or timer holds what
  ctxleak analyze    read pprof heap and goroutine profiles, find what stays
                     in use or grows, and fail CI past a threshold
  ctxleak cost       measure what carrying a request context costs, beside
                     Node, Bun and Python's published figures

Exit status: 0 clean, 1 retention found or expectation not met,
2 usage or input error.`,
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := ui.ParseMode(a.color); !ok {
				return usageErrorf("invalid --color %q: want auto, always or never", a.color)
			}
			return nil
		},
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetVersionTemplate("ctxleak {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageErrorf("%v (see '%s --help')", err, cmd.CommandPath())
	})
	root.PersistentFlags().StringVar(&a.color, "color", "auto",
		"colour and box drawing: auto (on a terminal unless NO_COLOR is set), always or never")
	_ = root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions(
		[]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))

	root.AddCommand(
		newRunCmd(a),
		newScenarioChildCmd(a),
		newHoldersCmd(a),
		newAnalyzeCmd(a),
		newCostCmd(a),
		newCostChildCmd(a),
	)
	return root
}

// version reports the module version from the build info, falling back to
// the VCS revision the binary was built from, then to "devel".
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "devel " + rev + dirty
	}
	return "devel"
}

// exactArgs, rangeArgs and so on validate positional arguments with errors
// that exit 2 and point at --help.
func rangeArgs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || (max >= 0 && len(args) > max) {
			want := fmt.Sprintf("%d to %d arguments", min, max)
			switch {
			case max < 0:
				want = fmt.Sprintf("at least %s", english.Plural(min, "argument"))
			case min == max:
				want = english.Plural(min, "argument")
			}
			return usageErrorf("%s takes %s, got %d (see '%s --help')",
				cmd.CommandPath(), want, len(args), cmd.CommandPath())
		}
		return nil
	}
}

// oneOf returns a usage error unless v is one of allowed; flag names the flag.
func oneOf(flag, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return usageErrorf("invalid --%s %q: want %s", flag, v, strings.Join(allowed, ", "))
}

// changed reports whether the user set the named flag.
func changed(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}
