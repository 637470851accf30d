package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/spf13/cobra"
)

// holdersFlags are the flags of "ctxleak holders".
type holdersFlags struct {
	binary       string
	httpTimeout  time.Duration // for a URL
	maxDumpSize  bytesize.Size // for a URL
	maxMemory    bytesize.Size // 0: heapdump.DefaultMemoryLimit
	maxDWARF     bytesize.Size // 0: binsym's default
	minSize      bytesize.Size
	top          int
	focus        string
	maxPathSteps int
	format       string
	output       string
	force        bool
	http         string // serve the web view on this [HOST]:PORT
	noBrowser    bool
	leaks        string // a goroutineleak profile of the same process, taken after the dump
}

func newHoldersCmd(a *app) *cobra.Command {
	var f holdersFlags
	cmd := &cobra.Command{
		Use:   "holders DUMP|URL [--binary EXE] [--leaks PROFILE]",
		Short: "Read a heap dump and say which goroutine frame, global or timer holds what",
		Long: `Holders reads a Go heap dump (runtime/debug.WriteHeapDump) and reports who
keeps memory alive. It groups first and applies --min-size second: objects
held the same way (by goroutines in the same function created at the same
place, by the same global, in the same slot; shared objects by the same
roots) are one group, and each group that retains --min-size or more in all
is reported: 10,000 goroutines that each hold a 4 KiB context are one group
of 39 MiB. For each group: the goroutine frame, global, timer or finalizer
that holds it, the typed path from there to its first object (past
--max-path-steps steps, the middle is left out and counted), where it was
allocated and how many bytes it retains (computed with the dominator tree
of the heap).

Give the executable that wrote the dump with --binary: it names source
lines, goroutine creation sites, globals, closures and types, and it tells
a callee's arguments from its caller's locals. Build it with "go build"
(go run and go test strip the symbols that name globals).

To get a dump from your own program:

    func main() {
        runtime.MemProfileRate = 1 // first, to record allocation sites
        ...
    }

    func dumpHeap(path string) error {
        f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
        if err != nil {
            return err
        }
        defer f.Close()
        runtime.GC()
        debug.WriteHeapDump(f.Fd())
        return nil
    }

Or let a running service serve its dump with package watch (Handler, with
Options.AllowHeapDump) and give its URL: ctxleak downloads it into a 0600
temporary file (at most --max-dump-size, within --http-timeout), refuses it
when the service's build ID is not --binary's, and deletes it when done.

A dump holds every byte of the process, secrets included: keep it 0600 and
delete it when done. ctxleak never prints object contents.

DUMP "-" reads the dump from standard input (spooled to a temporary file,
mode 0600, at most --max-dump-size, removed on exit); -o - writes to
standard output. -o never replaces an existing file unless --force is
given.

Exit status, whatever the format: 0 when nothing of --min-size or more is
retained (after --focus), 1 when something is, 2 for bad flags or an
unreadable dump or executable. Chain a viewer with ";", not "&&", since
finding retention exits 1.

--leaks PROFILE marks the groups held by goroutines that Go 1.27's
goroutineleak profile proved leaked (blocked for ever on a channel or lock
nothing runnable reaches), with what they retain, and lists them first;
groups of goroutines blocked on a channel a global keeps are marked not
proven leaked, however long they wait: the profile cannot see them. Take the
profile in the same process after the dump (a dump after it kills a
Go 1.27 process): a file, "-" or a URL. Its debug=2 form
(/debug/pprof/goroutineleak?debug=2, a traceback of all goroutines) names
the leaked goroutines by id; the proto and debug=1 forms only by stack,
matched against the dump's goroutines by functions and wait reason (give
--binary: calls inlined into a frame need it). The report says how many
leaked goroutines are in no group, and why.

--http [HOST]:PORT serves a web view of the dump instead of printing the
report, as "go tool pprof -http" does: the groups, the dominator tree, each
object with the paths from the roots that hold it, the roots and a treemap,
and their JSON (docs/web.md). The host defaults to 127.0.0.1; :0 picks a
free port. A browser opens on the URL unless --no-browser is given.
Ctrl-C stops the server (exit 130).`,
		Example: `  ctxleak holders app.heapdump --binary ./app
  ctxleak holders app.heapdump --binary ./app --focus 'main\.Upload' --top 3
  ctxleak holders http://localhost:6060/debug/ctxleak/heapdump --binary ./app
  ctxleak holders app.heapdump --binary ./app --leaks leak.debug2.txt
  ctxleak holders app.heapdump --binary ./app --http :0
  ctxleak holders app.heapdump --binary ./app --format pprof -o holders.pb.gz --force; go tool pprof -http=: holders.pb.gz
  ssh host cat /tmp/app.heapdump | ctxleak holders - --binary ./app`,
		Args: rangeArgs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runHolders(cmd, f, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.binary, "binary", "", "the executable that wrote the dump (`EXE`), for names, lines and types")
	fs.DurationVar(&f.httpTimeout, "http-timeout", 5*time.Minute, "time limit for downloading a dump from a URL")
	fs.Var(bytesize.NewFlag(&f.maxDumpSize, 16*bytesize.GiB), "max-dump-size", "refuse a dump from a URL or standard input larger than this `SIZE`")
	fs.Var(bytesize.NewFlag(&f.maxMemory, 0), "max-memory", "refuse a dump whose analysis would take more than `SIZE` of memory (default 128MiB plus 1.5 times the dump; millions of tiny objects can need more)")
	fs.Var(bytesize.NewFlag(&f.maxDWARF, 0), "max-dwarf", "refuse an executable whose compressed DWARF inflates to more than `SIZE` in all (default 20 times the executable, at most 2GiB; real ones take 2 to 5 times)")
	fs.Var(bytesize.NewFlag(&f.minSize, heap.DefaultMinSize), "min-size", "report objects and holdings of at least this `SIZE` (512KiB, 1MiB, 1GiB)")
	fs.IntVar(&f.top, "top", 10, "groups to show, largest first (0: all)")
	fs.IntVar(&f.maxPathSteps, "max-path-steps", heap.DefaultMaxPathSteps, "show at most `N` steps of a path; longer ones leave out and count the middle")
	fs.StringVar(&f.focus, "focus", "", "keep groups whose holder, path or allocation site matches `REGEX`")
	fs.StringVar(&f.format, "format", "text", "output format: text, json or pprof (a retention profile for go tool pprof)")
	fs.StringVarP(&f.output, "output", "o", "", "write the report to `FILE` (mode 0600; - is stdout) instead of stdout")
	fs.BoolVarP(&f.force, "force", "f", false, "let -o replace an existing file")
	fs.StringVar(&f.http, "http", "", "serve a web view on `[HOST]:PORT` (host 127.0.0.1 unless given; :0 picks a port) instead of printing")
	fs.BoolVar(&f.noBrowser, "no-browser", false, "with --http, do not open a browser")
	fs.StringVar(&f.leaks, "leaks", "", "mark the groups of goroutines this goroutineleak `PROFILE` (Go 1.27; a file, - or URL; debug=2 for ids) proves leaked, and list them first")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(
		[]string{"text", "json", "pprof"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) runHolders(cmd *cobra.Command, f holdersFlags, dump string) error {
	if err := checkInputs("", dump); err != nil {
		return err
	}
	if err := checkInputs("binary", f.binary); err != nil {
		return err
	}
	if err := checkInputs("leaks", f.leaks); err != nil {
		return err
	}
	if f.leaks == stdinName && dump == stdinName {
		return usageErrorf("--leaks - and DUMP - both read standard input: give one of them as a file")
	}
	if err := oneOf("format", f.format, "text", "json", "pprof"); err != nil {
		return err
	}
	if f.top < 0 {
		return usageErrorf("invalid --top %d: want 0 (all) or more", f.top)
	}
	if f.minSize <= 0 {
		return usageErrorf("invalid --min-size %s: want more than 0", bytesize.Compact(f.minSize))
	}
	if f.maxPathSteps < 2 {
		return usageErrorf("invalid --max-path-steps %d: want 2 or more", f.maxPathSteps)
	}
	var focus *regexp.Regexp
	if f.focus != "" {
		re, err := regexp.Compile(f.focus)
		if err != nil {
			return usageErrorf("invalid --focus %q: %v", f.focus, err)
		}
		focus = re
	}
	if f.output == stdinName {
		f.output = ""
	}
	if f.http != "" {
		if f.output != "" || f.format != "text" {
			return usageErrorf("--http serves the web view: it takes no --format or -o")
		}
		if f.leaks != "" {
			return usageErrorf("--http serves the web view, which does not show --leaks: print the report instead")
		}
		if _, err := webAddr(f.http); err != nil {
			return err
		}
	}
	if f.format == "pprof" && f.output == "" && ui.IsTerminal(a.stdout) {
		return usageErrorf("--format pprof writes a binary profile: give -o FILE or redirect stdout")
	}

	ctx := cmd.Context()
	var leaks *heap.Leaks
	if f.leaks != "" {
		l, err := a.readLeaks(ctx, f.leaks, f.httpTimeout)
		if err != nil {
			return err
		}
		leaks = l
	}
	source := dump
	if isURL(dump) {
		if f.httpTimeout <= 0 {
			return usageErrorf("invalid --http-timeout %v: want a positive duration such as 5m", f.httpTimeout)
		}
		path, cleanup, err := downloadDump(dump, f.httpTimeout, f.maxDumpSize, f.binary)
		if err != nil {
			return err
		}
		defer cleanup()
		dump = path
	}
	if dump == stdinName {
		path, remove, err := a.spoolStdin(ctx, int64(f.maxDumpSize))
		if err != nil {
			return err
		}
		defer remove()
		dump = path
	}

	var bin *binsym.Binary
	if f.binary != "" {
		b, err := openBinary(f.binary, uint64(f.maxDWARF))
		if err != nil {
			hint := ""
			if ie := (*binsym.InflateError)(nil); errors.As(err, &ie) && !ie.Beyond {
				hint = "; if the machine has the memory, raise the limit with --max-dwarf"
			}
			var oe *binsym.OpenError
			if errors.As(err, &oe) {
				return usageErrorf("--binary %s: %v%s", oe.Path, oe.Err, hint)
			}
			return usageErrorf("--binary: %v%s", err, hint)
		}
		bin = b
	}
	opts := []heap.Option{heap.MemoryLimit(int64(f.maxMemory)), heap.ReturnMemory()}
	prog := a.newProgress()
	if prog != nil {
		opts = append(opts, heap.OnProgress(prog.heap(source)))
	}
	var rep *heap.Report
	var web *heap.Analysis // kept open for --http
	tuneGCForDump(dump, int64(f.maxMemory))
	err := await(ctx, func() error {
		defer prog.clear()
		an, err := heap.Analyze(dump, bin, opts...)
		if err != nil {
			hint := ""
			var me *heapdump.MemoryLimitError
			switch {
			case errors.As(err, &me):
				hint = fmt.Sprintf("; if the machine has the memory, raise the limit with --max-memory (the default for this dump is %s)",
					bytesize.Format(me.Default()))
			case source == dump:
				hint = dumpHint(dump)
			}
			return usageErrorf("%s%s", strings.ReplaceAll(err.Error(), dump, source), hint)
		}
		if f.http != "" {
			web = an
			return nil
		}
		defer an.Close()
		prog.show("ctxleak: finding the holders in "+source, true)
		hopts := []heap.Option{heap.MinSize(uint64(f.minSize)), heap.Top(f.top), heap.Focus(focus), heap.MaxPathSteps(f.maxPathSteps)}
		if leaks != nil {
			hopts = append(hopts, heap.LeakedGoroutines(leaks))
		}
		rep, err = an.Holders(hopts...)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if web != nil {
		defer web.Close()
		return a.serveWeb(ctx, web, f, source, heap.MinSize(uint64(f.minSize)), heap.Top(f.top), heap.Focus(focus))
	}
	if source != dump {
		rep.Dump = source // the URL or "-", not the deleted temporary file
	}

	var out bytes.Buffer
	switch f.format {
	case "json":
		enc := json.NewEncoder(&out)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	case "pprof":
		p := rep.Profile()
		p.Comments = []string{"ctxleak holders " + source}
		err = p.Write(&out)
	default:
		w := a.stdout
		if f.output != "" {
			w = &out
		}
		err = rep.WriteText(&out, printerStyle{a.printer(w)})
	}
	if err != nil {
		return err
	}
	if err := a.writeOutput(f.output, f.force, out.Bytes()); err != nil {
		return err
	}
	if m := rep.Leaks; m != nil && m.Groups > 0 {
		return findingsErrorf("retention found: %s of %s or more; %s proven leaked retain %s in %s",
			english.Plural(len(rep.Groups), "group"), bytesize.Format(int64(rep.MinSize)),
			english.Plural(m.InGroups, "goroutine"), bytesize.Format(int64(m.RetainedBytes)), english.Plural(m.Groups, "group"))
	}
	if len(rep.Groups) > 0 {
		g := rep.Groups[0]
		more := "or more"
		if rep.Together() {
			more += " (one global's groups counted together)"
		}
		return findingsErrorf("retention found: %s of %s %s; the largest, %s, is held by %s",
			english.Plural(len(rep.Groups), "group"), bytesize.Format(int64(rep.MinSize)), more,
			bytesize.Format(int64(g.RetainedBytes)), g.Short())
	}
	return nil
}

// writeOutput writes data to stdout, or to the file path, mode 0600: a new
// file, or with force one that exists, replaced.
func (a *app) writeOutput(path string, force bool, data []byte) error {
	if path == "" {
		_, err := a.stdout.Write(data)
		return err
	}
	flags := os.O_CREATE | os.O_EXCL | os.O_WRONLY
	if force {
		flags = os.O_CREATE | os.O_TRUNC | os.O_WRONLY
	}
	if st, err := os.Stat(path); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		// Opening a named pipe that no one reads would wait for ever:
		// open it without waiting, which fails at once instead.
		flags |= openNoWait
	}
	file, err := os.OpenFile(path, flags, 0o600)
	if errors.Is(err, os.ErrExist) {
		return usageErrorf("-o %s: file exists; --force replaces it", path)
	}
	if errors.Is(err, errNoReader) {
		return usageErrorf("-o %s: a named pipe (FIFO) that no process is reading", path)
	}
	if err != nil {
		return usageErrorf("-o: %v", err)
	}
	if _, err := io.Copy(file, bytes.NewReader(data)); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// printerStyle adapts a ui.Printer to heap.Style.
type printerStyle struct{ p *ui.Printer }

func (s printerStyle) Heading(t string) string { return s.p.Heading(t) }
func (s printerStyle) Bold(t string) string    { return s.p.Bold(t) }
func (s printerStyle) Faint(t string) string   { return s.p.Faint(t) }
func (s printerStyle) Warn(t string) string    { return s.p.Warn(t) }
func (s printerStyle) Unicode() bool           { return s.p.Styled() }
func (s printerStyle) Width() int              { return s.p.Width() }

// Input names the flag that supplies what r says is missing.
func (s printerStyle) Input(r heap.Reason) string {
	if r == heap.NoBinary {
		return "--binary"
	}
	return ""
}
