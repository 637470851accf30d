package heap_test

import (
	"fmt"
	"log"

	"github.com/ctxleak/ctxleak/heap"
)

// Load a dump, then list the goroutine frames that hold objects of 1 MiB or
// more directly.
func ExampleLoad() {
	g, err := heap.Load("heap.dump", heap.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	fmt.Printf("%d live objects, %d bytes\n", g.Stats.LiveObjects, g.Stats.LiveBytes)
	for i, r := range g.Roots {
		if r.Kind != heap.RootFrame {
			continue
		}
		f := g.Frames[r.Frame]
		for _, s := range g.RootSlots(i) {
			if size := g.NodeSize(s.Node); size >= 1<<20 {
				fmt.Printf("goroutine %d, %s: %#x, %d bytes\n", g.Goroutines[r.Goroutine].ID, f.Func, g.ObjectAddr(s.Node), size)
			}
		}
	}
}
