package dom_test

import (
	"fmt"
	"strings"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
)

// A heap in miniature: a super-root links to the GC roots, a goroutine frame
// and a global; the frame holds a context whose value holds an upload and its
// 50 MiB body; the global holds a small cache; a dead object still points at
// the upload.
func Example() {
	names := []string{"super-root", "frame main.loop", "global main.cache", "context.valueCtx",
		"*main.Upload", "[]uint8", "map[string]*main.entry", "dead"}
	sizes := []uint64{0, 0, 8, 48, 64, 50 << 20, 4096, 32}
	g := dom.Graph{
		// node:        0  1  2  3  4  5  6  7  end
		Start: []uint32{0, 2, 3, 4, 5, 6, 6, 6, 7},
		Succ: []uint32{
			1, 2, // super-root -> frame, global
			3, // frame -> ctx
			6, // global -> map
			4, // ctx -> upload
			5, // upload -> body
			4, // dead -> upload
		},
	}
	t, err := dom.New(g, 0)
	if err != nil {
		panic(err)
	}
	retained := dom.Retained(t, sizes)
	objects := t.RetainedObjects()
	for _, v := range t.Preorder() {
		fmt.Printf("%-22s idom %-17s retains %8d bytes in %d objects\n",
			names[v], names[t.Idom(v)], retained[v], objects[v])
	}
	fmt.Println("reachable(dead):", t.Reachable(7))

	var chain []string
	for d := range t.Chain(5) {
		chain = append(chain, names[d])
	}
	fmt.Println("dominators of the body:", strings.Join(chain, " <- "))

	kids := t.Children()
	fmt.Print("the super-root immediately dominates:")
	for _, v := range kids.Succs(0) {
		fmt.Print(" ", names[v])
	}
	fmt.Println()
	// Output:
	// super-root             idom super-root        retains 52433016 bytes in 7 objects
	// frame main.loop        idom super-root        retains 52428912 bytes in 4 objects
	// context.valueCtx       idom frame main.loop   retains 52428912 bytes in 3 objects
	// *main.Upload           idom context.valueCtx  retains 52428864 bytes in 2 objects
	// []uint8                idom *main.Upload      retains 52428800 bytes in 1 objects
	// global main.cache      idom super-root        retains     4104 bytes in 2 objects
	// map[string]*main.entry idom global main.cache retains     4096 bytes in 1 objects
	// reachable(dead): false
	// dominators of the body: []uint8 <- *main.Upload <- context.valueCtx <- frame main.loop <- super-root
	// the super-root immediately dominates: frame main.loop global main.cache
}
