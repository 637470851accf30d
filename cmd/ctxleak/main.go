// Command ctxleak finds memory kept alive by request contexts and background
// goroutines, and says who holds it.
//
// Run "ctxleak --help" for the commands.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	// ctxleak writes no heap profile of itself, and sampling the large
	// arrays a big dump's analysis allocates took about 0.5% of its CPU
	// time. A scenario child sets a rate of its own (scenarios.Run).
	runtime.MemProfileRate = 0
	os.Exit(execute(os.Stdin, os.Stdout, os.Stderr, os.Args[1:]))
}

// execute runs the command line and returns the process exit status,
// printing any error once, as "ctxleak: ...", to stderr. SIGINT and SIGTERM
// cancel the command's context; the command cleans up and ctxleak exits 130
// or 143, as a shell reports a process killed by that signal.
func execute(stdin io.Reader, stdout, stderr io.Writer, args []string) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			cancel(&interruptError{sig: s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	err := run(ctx, stdin, stdout, stderr, args)
	if cause := context.Cause(ctx); cause != nil && err != nil {
		err = cause
	}
	return report(stderr, err)
}

// run builds the command tree and runs it on args.
func run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, args: args}
	root := newRootCmd(a)
	if cmd, _, err := root.Find(args); err == nil {
		if name := singleDashFlag(cmd, args); name != "" {
			return usageErrorf("unknown flag -%s: did you mean --%s? (long flags take two dashes) (see '%s --help')",
				name, name, cmd.CommandPath())
		}
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if perr := a.stopCPUProfile(); err == nil {
		err = perr
	}
	return err
}
