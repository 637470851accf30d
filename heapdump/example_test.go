package heapdump_test

import (
	"fmt"
	"log"

	"github.com/ctxleak/ctxleak/heapdump"
)

// Load a dump, then list the goroutine frames that hold objects of 1 MiB or
// more directly.
func ExampleLoad() {
	g, err := heapdump.Load("heap.dump", heapdump.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	st := g.Stats()
	fmt.Printf("%d live objects, %d bytes\n", st.LiveObjects, st.LiveBytes)
	d := g.Dump()
	g.ForEachRoot(func(r *heapdump.Root) bool {
		if r.Kind != heapdump.RootFrame {
			return true
		}
		fn := d.FrameFunc(r.Frame)
		for _, s := range g.RootSlots(r.Node) {
			if size := g.Size(s.Node); size >= 1<<20 {
				fmt.Printf("goroutine %d, %s: %#x, %d bytes\n", d.Goroutines[r.Goroutine].ID, fn, g.ObjectAddr(s.Node), size)
			}
		}
		return true
	})
}
