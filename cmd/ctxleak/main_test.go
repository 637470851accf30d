package main

import (
	"os"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/internal/dumptest"
	// The scenarios that crash, hang or misbehave on purpose: known by name
	// to this test binary, acting as ctxleak and as its scenario children,
	// and not to the ctxleak binary.
	_ "github.com/ctxleak/ctxleak/scenarios/scenariostest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as the ctxleak command inside test
// scripts (testdata/script/*.txtar), so scripts run the real CLI in a child
// process with real exit codes; "ctxleak run" re-executes this binary as
// each scenario's child, so the test scenarios run there too.
//
// A binary built with -race sleeps a second before it exits
// (atexit_sleep_ms=1000); the ctxleak processes started from this test
// binary, and their scenario children, do not.
func TestMain(m *testing.M) {
	os.Setenv("GORACE", noExitSleep())
	testscript.Main(dumptestMain{m}, map[string]func(){
		"ctxleak": func() { os.Exit(execute(os.Stdin, os.Stdout, os.Stderr, os.Args[1:])) },
	})
}

// dumptestMain runs the tests through dumptest.Main, which removes the
// files tests build once and share (dumptest.TempDir) and exits without
// the race detector's exit sleep.
type dumptestMain struct{ m *testing.M }

// Run runs the tests; dumptest.Main exits, so it never returns.
func (d dumptestMain) Run() int {
	dumptest.Main(d.m)
	panic("unreachable")
}

// TestScripts runs every testdata/script/*.txtar script.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("GORACE", noExitSleep())
			return nil
		},
	})
}

// noExitSleep is GORACE with the race detector's sleep at exit turned off.
func noExitSleep() string {
	v := os.Getenv("GORACE")
	if strings.Contains(v, "atexit_sleep_ms=0") {
		return v
	}
	return strings.TrimSpace(v + " atexit_sleep_ms=0")
}
