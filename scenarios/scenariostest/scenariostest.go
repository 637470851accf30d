// Package scenariostest holds scenarios that exist only to test the runner
// and "ctxleak run": a child that crashes, one that hangs, one whose payload
// is not freed as expected and one held by another holder than expected.
//
// Importing the package registers them with [scenarios.Register], so that
// [scenarios.Lookup] finds them by name, in the test binary and in the
// child processes it starts from itself. Only tests import it: the ctxleak
// binary does not contain these scenarios.
package scenariostest

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/ctxleak/ctxleak/scenarios"
)

func init() { scenarios.Register(All()...) }

// All returns the test scenarios: Crash, Hang, Unexpected, WrongHolder.
func All() []*scenarios.Scenario {
	return []*scenarios.Scenario{Crash, Hang, Unexpected, WrongHolder}
}

// Crash is "test-crash": the child panics after its first phase.
var Crash = &scenarios.Scenario{
	Name:        "test-crash",
	Description: "Test only: the child panics after its first phase.",
	Mechanism:   "none: a deliberate crash",
	Expect:      "a crash, reported as this scenario's error",
	Phases:      []scenarios.Phase{{Name: "started", Alive: true}, {Name: "never", Alive: false}},
	Run: func(env *scenarios.Env) error {
		p := env.Payload()
		env.Phase("started")
		fmt.Fprintln(os.Stderr, "test-crash: about to panic")
		panic(fmt.Sprintf("test-crash: deliberate crash with a %d-byte payload", len(p)))
	},
}

// Hang is "test-hang": the child hangs after its first phase, with its
// payload alive, until it is killed or its parent goes away.
var Hang = &scenarios.Scenario{
	Name:        "test-hang",
	Description: "Test only: the child hangs after its first phase.",
	Mechanism:   "none: a deliberate hang",
	Expect:      "a hang, killed at the runner's timeout",
	Phases:      []scenarios.Phase{{Name: "started", Alive: true}, {Name: "never", Alive: false}},
	Run: func(env *scenarios.Env) error {
		parent := os.Getppid()
		p := env.Payload()
		env.Phase("started")
		fmt.Fprintln(os.Stderr, "test-hang: hanging")
		// Hang, with the payload alive, until killed or orphaned: a test
		// that fails before it kills the child leaves nothing behind.
		for os.Getppid() == parent {
			time.Sleep(100 * time.Millisecond)
		}
		sink.Add(uint32(p[0]))
		return errors.New("test-hang: the parent went away")
	},
}

// Unexpected is "test-unexpected": a global keeps the payload, but the
// scenario expects it freed after the request returns.
var Unexpected = &scenarios.Scenario{
	Name:        "test-unexpected",
	Description: "Test only: keeps the payload in a global but expects it freed.",
	Mechanism:   "a global variable holds the payload",
	Expect:      "freed after the request returns (wrongly)",
	Phases: []scenarios.Phase{
		{Name: "request-running", Alive: true},
		{Name: "request-returned", Alive: false},
	},
	Globals: []scenarios.Global{keptGlobal},
	Run: func(env *scenarios.Env) error {
		p := env.Payload()
		env.Phase("request-running")
		kept = p
		env.Phase("request-returned")
		return nil
	},
}

// WrongHolder is "test-wrong-holder": a global holds the payload, but the
// expectation names the frame of a function that does not exist.
var WrongHolder = &scenarios.Scenario{
	Name:        "test-wrong-holder",
	Description: "Test only: a global holds the payload, but the expectation names a goroutine frame.",
	Mechanism:   "a global variable holds the payload",
	Expect:      "held by a frame of a function that does not exist (wrongly)",
	Phases: []scenarios.Phase{
		{Name: "request-returned", Alive: true, Holder: `^goroutine \d+ frame scenarios\.nowhere \(scenarios/[a-z]+\.go:\d+\)$`},
		{Name: "released", Alive: false},
	},
	Globals: []scenarios.Global{keptGlobal},
	Run: func(env *scenarios.Env) error {
		kept = env.Payload()
		env.Phase("request-returned")
		kept = nil
		env.Phase("released")
		return nil
	},
}

// kept is where Unexpected and WrongHolder keep their payload.
var kept []byte

// keptGlobal names kept in heap dumps.
var keptGlobal = scenarios.GlobalAt("github.com/ctxleak/ctxleak/scenarios/scenariostest.kept", &kept)

// sink keeps Hang's payload alive until it returns.
var sink atomic.Uint32
