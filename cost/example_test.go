package cost_test

import (
	"fmt"

	"github.com/ctxleak/ctxleak/cost"
)

// Select picks rows by name, in catalogue order, or reports an unknown one.
func ExampleSelect() {
	list, err := cost.Select([]string{"value-depth-100", "argument", "pending-goroutine"})
	if err != nil {
		panic(err)
	}
	for _, m := range list {
		fmt.Printf("%-18s %-7s %s\n", m.Name, m.Kind, m.Description)
	}
	_, err = cost.Select([]string{"value-depth-1000"})
	fmt.Println(err != nil)
	// Output:
	// argument           op      pass the request ID to a function as an argument (the baseline)
	// value-depth-100    op      ctx.Value found 100 WithValue layers down
	// pending-goroutine  pending a goroutine blocked on <-ctx.Done()
	// true
}
