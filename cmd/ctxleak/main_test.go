package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as the ctxleak command inside test
// scripts (testdata/script/*.txtar), so scripts run the real CLI in a child
// process with real exit codes.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ctxleak": func() { os.Exit(execute(os.Stdout, os.Stderr, os.Args[1:])) },
	})
}

// TestScripts runs every testdata/script/*.txtar script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
	})
}
