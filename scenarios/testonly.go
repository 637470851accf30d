package scenarios

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// testScenarios are reachable only when Lookup is asked for them: they let
// the tests of the runner and of "ctxleak run" check what happens when a
// child crashes, hangs, or a scenario does not behave as expected.
var testScenarios = []*Scenario{
	{
		Name:        "test-crash",
		Description: "Test only: the child panics after its first phase.",
		Mechanism:   "none: a deliberate crash",
		Expect:      "a crash, reported as this scenario's error",
		Phases:      []Phase{{Name: "started", Alive: true}, {Name: "never", Alive: false}},
		Run: func(env *Env) error {
			p := env.Payload()
			env.Phase("started")
			fmt.Fprintln(os.Stderr, "test-crash: about to panic")
			panic(fmt.Sprintf("test-crash: deliberate crash with a %d-byte payload", len(p)))
		},
	},
	{
		Name:        "test-hang",
		Description: "Test only: the child hangs after its first phase.",
		Mechanism:   "none: a deliberate hang",
		Expect:      "a hang, killed at --timeout",
		Phases:      []Phase{{Name: "started", Alive: true}, {Name: "never", Alive: false}},
		Run: func(env *Env) error {
			parent := os.Getppid()
			p := env.Payload()
			env.Phase("started")
			fmt.Fprintln(os.Stderr, "test-hang: hanging")
			// Hang, with the payload alive, until killed or orphaned: a
			// test that fails before it kills the child leaves nothing.
			for os.Getppid() == parent {
				time.Sleep(100 * time.Millisecond)
			}
			sink.Add(uint32(p[0]))
			return errors.New("test-hang: the parent went away")
		},
	},
	{
		Name:        "test-unexpected",
		Description: "Test only: keeps the payload in a global but expects it freed.",
		Mechanism:   "a global variable holds the payload",
		Expect:      "freed after the request returns (wrongly)",
		Phases:      []Phase{{Name: "request-running", Alive: true}, {Name: "request-returned", Alive: false}},
		Run: func(env *Env) error {
			p := env.Payload()
			env.Phase("request-running")
			kept = p
			env.Phase("request-returned")
			return nil
		},
	},
	{
		Name:        "test-wrong-holder",
		Description: "Test only: a global holds the payload, but the expectation names a goroutine frame.",
		Mechanism:   "a global variable holds the payload",
		Expect:      "held by a frame of a function that does not exist (wrongly)",
		Phases: []Phase{
			{Name: "request-returned", Alive: true, Holder: holders(frameOf("nowhere"))},
			{Name: "released", Alive: false},
		},
		Run: func(env *Env) error {
			kept = env.Payload()
			env.Phase("request-returned")
			kept = nil
			env.Phase("released")
			return nil
		},
	},
}

// kept is where test-unexpected and test-wrong-holder keep their payload.
var kept []byte

// TestOnly returns the scenarios that exist for testing the runner: a child
// that crashes, one that hangs, one whose payload is not freed as expected
// and one whose payload is held by another holder than expected.
func TestOnly() []*Scenario { return append([]*Scenario(nil), testScenarios...) }
