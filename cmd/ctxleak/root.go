package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// app holds what every command shares: the standard streams and global flags.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	color          string   // --color: auto, always or never
	args           []string // the command line, for hints about flag errors

	cpuProfilePath string   // --cpuprofile
	cpuProfile     *os.File // open while the CPU profile is written
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

A file argument "-" is standard input; -o - is standard output. Flags take
two dashes: --base, not -base.

Exit status: 0 clean, 1 retention found or expectation not met,
2 usage or input error, 130 on SIGINT and 143 on SIGTERM.`,
		Version:       versionText(debug.ReadBuildInfo()),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := ui.ParseMode(a.color); !ok {
				return usageErrorf("invalid --color %q: want auto, always or never", a.color)
			}
			if a.cpuProfilePath != "" {
				return a.startCPUProfile(a.cpuProfilePath)
			}
			return nil
		},
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetVersionTemplate("ctxleak {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if hint := singleDashHint(cmd, err, a.args); hint != "" {
			return usageErrorf("%s (see '%s --help')", hint, cmd.CommandPath())
		}
		return usageErrorf("%v (see '%s --help')", err, cmd.CommandPath())
	})
	root.PersistentFlags().StringVar(&a.color, "color", "auto",
		"colour and box drawing: auto (on a terminal unless NO_COLOR is set), always or never")
	root.PersistentFlags().StringVar(&a.cpuProfilePath, "cpuprofile", "",
		"write a CPU profile of the run to `FILE` (mode 0600), for go tool pprof")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
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

// versionText is what --version prints after "ctxleak ": the module
// version, then, in the style of "go version -m", the Go release, the
// command and module paths and the VCS revision, time and state the binary
// was built from.
func versionText(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "(unknown: the binary has no build information)"
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var b strings.Builder
	b.WriteString(version)
	fmt.Fprintf(&b, "\n\tgo\t%s", bi.GoVersion)
	if bi.Path != "" {
		fmt.Fprintf(&b, "\n\tpath\t%s", bi.Path)
	}
	if bi.Main.Path != "" {
		fmt.Fprintf(&b, "\n\tmod\t%s\t%s", bi.Main.Path, version)
		if bi.Main.Sum != "" {
			fmt.Fprintf(&b, "\t%s", bi.Main.Sum)
		}
	}
	for _, s := range bi.Settings {
		if strings.HasPrefix(s.Key, "vcs") {
			fmt.Fprintf(&b, "\n\tbuild\t%s=%s", s.Key, s.Value)
		}
	}
	return b.String()
}

// singleDashFlag returns the name of a long flag of cmd that args give
// with a single dash, pprof style, when pflag took it for shorthands and a
// value ("-output x" as -o "utput", "-force" as -f -o "rce"); "" if none.
func singleDashFlag(cmd *cobra.Command, args []string) string {
	lookup := func(name string) *pflag.Flag {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	for i, arg := range args {
		if arg == "--" {
			break
		}
		if len(arg) < 3 || arg[0] != '-' || arg[1] == '-' {
			continue
		}
		if i > 0 && strings.HasPrefix(args[i-1], "--") && !strings.Contains(args[i-1], "=") {
			if f := lookup(args[i-1][2:]); f != nil && f.NoOptDefVal == "" {
				continue // the value of the flag before: --focus -binary
			}
		}
		name, _, _ := strings.Cut(arg[1:], "=")
		if len(name) > 1 && lookup(name) != nil {
			return name
		}
	}
	return ""
}

// singleDashHint explains an unknown shorthand flag error caused by a
// pprof-style single-dash long flag, "-base x" or "-http=:8080"; it returns
// "" for other errors. pflag reports what is left of the word after the
// shorthands it took ("-ttp=:8080" for "-http=:8080", -h being --help), so
// the word is looked up in args.
func singleDashHint(cmd *cobra.Command, err error, args []string) string {
	msg := err.Error()
	if !strings.HasPrefix(msg, "unknown shorthand flag: ") {
		return ""
	}
	i := strings.LastIndex(msg, " in -")
	if i < 0 {
		return ""
	}
	word := msg[i+len(" in -"):]
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if len(arg) > 2 && arg[0] == '-' && arg[1] != '-' && strings.HasSuffix(arg, word) {
			word = arg[1:]
			break
		}
	}
	name, _, _ := strings.Cut(word, "=")
	if len(name) < 2 || strings.HasPrefix(name, "-") {
		return ""
	}
	if cmd.Flags().Lookup(name) != nil {
		return fmt.Sprintf("unknown flag -%s: did you mean --%s? (long flags take two dashes)", name, name)
	}
	return fmt.Sprintf("unknown flag -%s: long flags take two dashes, and there is no --%s", name, name)
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
