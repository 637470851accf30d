// Command ctxleak finds memory kept alive by request contexts and background
// goroutines, and says who holds it.
//
// Run "ctxleak --help" for the commands.
package main

import (
	"io"
	"os"
)

func main() {
	os.Exit(execute(os.Stdout, os.Stderr, os.Args[1:]))
}

// execute runs the command line and returns the process exit status,
// printing any error once, as "ctxleak: ...", to stderr.
func execute(stdout, stderr io.Writer, args []string) int {
	err := run(stdout, stderr, args)
	return report(stderr, err)
}

// run builds the command tree and runs it on args.
func run(stdout, stderr io.Writer, args []string) error {
	root := newRootCmd(&app{stdout: stdout, stderr: stderr})
	root.SetArgs(args)
	return root.Execute()
}
