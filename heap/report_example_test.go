package heap_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/ctxleak/ctxleak/heap"
)

// flagStyle is a plain style that names the command-line flag supplying
// what a report lacks.
type flagStyle struct{ heap.PlainStyle }

func (flagStyle) Input(r heap.Reason) string {
	if r == heap.NoBinary {
		return "--binary"
	}
	return ""
}

// A command names its own flags in the text report through its Style; the
// report itself says what is missing with a typed Reason.
func ExampleStyle() {
	rep := &heap.Report{Dump: "app.heapdump", GoVersion: "go1.26.8", MinSize: heap.DefaultMinSize,
		Unknown: []heap.Unknown{{Reason: heap.NoBinary,
			Text: "no executable given: source lines, creation sites, names of globals and closures, and types are unknown"}}}
	if err := rep.WriteText(os.Stdout, flagStyle{}); err != nil {
		fmt.Println(err)
	}
	b, _ := json.Marshal(rep.Unknown[0])
	fmt.Printf("%s\n", b)
	// Output:
	// heap dump app.heapdump (go1.26.8)
	//   live      0 B in 0 objects; 0 goroutines
	//   dead      0 B in 0 objects (garbage not yet swept, unused span tails)
	//   shared    0 B in 0 objects reached from more than one root
	//   unknown   no executable given (--binary): source lines, creation sites, names of globals and closures, and types are unknown
	//
	// No object of 1.0 MiB or more is retained, and no root directly holds 1.0 MiB or more.
	// {"reason":"no_binary","text":"no executable given: source lines, creation sites, names of globals and closures, and types are unknown"}
}
