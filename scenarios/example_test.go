package scenarios_test

import (
	"fmt"

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
