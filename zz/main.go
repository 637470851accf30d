package main

import (
	"fmt"
	"os"

	"github.com/ctxleak/ctxleak/binsym"
)

func main() {
	b, err := binsym.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	for _, n := range os.Args[2:] {
		t := b.TypeByName(n)
		if t == nil {
			fmt.Println(n, "nil")
			continue
		}
		fmt.Println(n, t.Kind, t.Size)
		for _, f := range t.Fields {
			fmt.Printf("   %d %s %v %v\n", f.Offset, f.Name, f.Type.Name, f.Type.Kind)
		}
	}
}
