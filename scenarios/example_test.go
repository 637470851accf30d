package scenarios_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/ctxleak/ctxleak/scenarios"
)

// The catalogue, with the expected state of the payload at each phase.
func ExampleAll() {
	for _, s := range scenarios.All()[:3] {
		fmt.Print(s.Name, ":")
		for _, p := range s.Phases {
			state := "freed"
			if p.Alive {
				state = "alive"
			}
			fmt.Print(" ", p.Name, "=", state)
		}
		fmt.Println()
	}
	// Output:
	// request-ctx-tasks: request-running=alive request-returned=alive tasks-done=freed
	// empty-ctx-tasks: request-running=alive request-returned=freed tasks-done=freed
	// ids-only-ctx: request-running=alive request-returned=freed tasks-done=freed
}

// A scenario as "ctxleak run --list" shows it, and the head of the JSON
// document "ctxleak run --list --format json" prints.
func ExampleListing() {
	s, _ := scenarios.Lookup("global-cache")
	l := scenarios.NewListing([]*scenarios.Scenario{s})
	l.WriteText(ui.NewPrinter(os.Stdout, ui.Plain))
	var b strings.Builder
	if err := l.WriteJSON(&b); err != nil {
		panic(err)
	}
	fmt.Println(strings.Join(strings.Split(b.String(), "\n")[:3], "\n"))
	// Output:
	// global-cache
	//   The request context is stored in a package-level map keyed by request id; a janitor goroutine deletes the entries whose ids it receives on a package-level channel.
	//   expected:  alive after the request returns, until the entry is deleted
	//   phases:    request-running (alive) > request-returned (alive) > entry-deleted (freed)
	//   mechanism: a global variable is a GC root: map -> ctx -> payload until the entry is deleted
	//   leak profile (Go 1.27+): none, although the janitor blocks for ever once the entry is deleted: a global holds the channel it waits on (the profile's limit)
	//
	// leak profile: the goroutineleak profile (Go 1.27+) proves leaked only goroutines blocked on a channel, lock or wait group that no runnable goroutine and no global can reach: one blocked on a channel a global holds (global-cache's janitor) is never reported, even when nothing will ever send on it
	// {
	//   "schema": "ctxleak.run-list/v1",
	//   "scenarios": [
}
