package binsym_test

import (
	"fmt"
	"log"
	"path/filepath"
	"strconv"

	"github.com/ctxleak/ctxleak/binsym"
)

// The examples read testdata/prog, built by TestMain, and the heap dump it
// wrote.

// Naming what a heap dump holds: a global root, and a context node reached
// through an interface whose first word is an itab.
func Example() {
	b, err := binsym.Open(progs.exe)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	fmt.Println("missing:", b.Missing())

	// A root slot in the data or bss segment of the dump.
	cache, _ := b.LookupSymbol("main.cache")
	g, _ := b.Global(cache.Addr)
	fmt.Println("global", g.Name, b.GlobalType(g.Name))

	// An interface word pair (itab, data) whose itab is static: here the
	// one of *context.valueCtx as a context.Context, in a dump the first
	// word of the interface.
	itab, _ := binsym.StaticItab(b, "*context.valueCtx", "context.Context")
	typAddr, _ := b.ItabType(itab)
	t := b.TypeAt(typAddr)
	fmt.Println(t, "points to", t.Elem, t.Elem.Size, "bytes")

	// The parent context in a valueCtx: an interface data word.
	path, ft, data := t.Elem.PointerAt(8)
	fmt.Println(path, ft, data)
	// Output:
	// missing: []
	// global main.cache map[string]*main.Upload
	// *context.valueCtx points to context.valueCtx 48 bytes
	// .Context context.Context true
}

// A goroutine blocked in a callee: the pointers in its caller's outgoing
// arguments area are the callee's arguments.
func ExampleBinary_ArgsSize() {
	b, err := binsym.Open(progs.exe)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	frames, err := readDumpFrames(progs.dump)
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i < len(frames); i++ {
		callee, caller := frames[i-1], frames[i]
		if callee.name != "main.wait" || callee.goroutine != caller.goroutine {
			continue
		}
		args, _ := b.ArgsSize(callee.entry)
		lo := uint64(b.MinFrameSize())
		for _, off := range caller.ptrs {
			if off >= lo && off < lo+uint64(args) {
				fmt.Printf("%s frame +%d is an argument of %s\n", caller.name, off, callee.name)
			}
		}
		site, _ := b.CallSite(caller.pc)
		fmt.Printf("called at %s:%d\n", filepath.Base(site.File), site.Line)
	}
	// Output:
	// main.caller frame +8 is an argument of main.wait
	// called at main.go:147
}

// A func value object's first word is its code pointer: the closure's name
// and the layout of its captured variables.
func ExampleBinary_ClosureType() {
	b, err := binsym.Open(progs.exe)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	f, _ := b.FuncByName("main.scheduleRetry.func1")
	code := f.Entry // as read from the object's first word

	fn, _ := b.Func(code)
	fmt.Println(fn.Name, filepath.Base(fn.File), fn.Line)
	for _, field := range b.ClosureType(code).Fields {
		fmt.Println(field.Offset, field.Name, field.Type)
	}
	// Output:
	// main.scheduleRetry.func1 main.go 125
	// 0 F uintptr
	// 8 u *main.Upload
}

// Walking a typed path: which field holds each pointer of an object.
func ExampleType_PointerAt() {
	b, err := binsym.Open(progs.exe)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	upload := b.TypeByName("main.Upload")
	for off := int64(0); off < upload.Size; off += 8 {
		if path, ft, data := upload.PointerAt(off); ft != nil {
			fmt.Printf("+%d %s %s", off, path, ft)
			if data {
				fmt.Print(" (interface data)")
			}
			fmt.Println()
		}
	}
	// Output:
	// +0 .Name string
	// +16 .Body []uint8
	// +40 .Meta map[string]context.Context
	// +48 .Next *main.Upload
	// +56 .Pair[0] interface {}
	// +64 .Pair[0] interface {} (interface data)
	// +72 .Pair[1] interface {}
	// +80 .Pair[1] interface {} (interface data)
	// +88 .Ctx context.Context
	// +96 .Ctx context.Context (interface data)
	// +104 .Done chan struct {}
	// +112 .Hook func() int
}

// A `go test` or `go run` executable is linked with -s -w: it has no
// symbols and no DWARF. Its types come from the runtime type descriptors,
// here the dynamic type of a Context interface whose itab the program
// printed.
func ExampleBinary_TypeAt_stripped() {
	b, err := binsym.Open(progs.stripped)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	itab, err := strconv.ParseUint(progs.strippedFacts["itab"]["*context.valueCtx"][0], 0, 64)
	if err != nil {
		log.Fatal(err)
	}
	typAddr, _ := b.ItabType(itab)
	t := b.TypeAt(typAddr)
	fmt.Println(t, "points to", t.IfacePointee())
	for _, f := range t.Elem.Fields {
		fmt.Println(f.Offset, f.Name, f.Type)
	}
	// Output:
	// *context.valueCtx points to context.valueCtx
	// 0 Context context.Context
	// 16 key interface {}
	// 32 val interface {}
}
