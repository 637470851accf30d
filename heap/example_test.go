package heap_test

import (
	"log"
	"os"
	"regexp"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
)

// Analyze a dump with the executable that wrote it, then print the ten
// largest holdings of 1 MiB or more under a request handler.
func ExampleAnalyze() {
	bin, err := binsym.Open("server")
	if err != nil {
		log.Fatal(err)
	}
	defer bin.Close()
	a, err := heap.Analyze("heap.dump", bin)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	rep, err := a.Holders(heap.MinSize(1<<20), heap.Top(10), heap.Focus(regexp.MustCompile(`ServeHTTP`)))
	if err != nil {
		log.Fatal(err)
	}
	if err := rep.WriteText(os.Stdout, heap.PlainStyle{}); err != nil {
		log.Fatal(err)
	}
}
