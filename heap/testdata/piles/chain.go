package main

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"unsafe"
)

// Patterns of large objects inside one another:
//   - chain:M N: the global main.chain holds a chain of N objects of M
//     bytes each (at least 16), each a struct whose first word points to
//     the next and whose other bytes hold no pointer: every object retains
//     all those after it.
func init() {
	patterns["chain"] = chainPile
}

// chain points to the first object of the chain.
var chain unsafe.Pointer

// chainPile builds the chain of n objects of the size patternArg says, of
// a type made for that size: struct { Next unsafe.Pointer; Pad [M-8]byte }.
func chainPile(n int, res *result) {
	m, err := strconv.Atoi(patternArg)
	if err != nil || m < 16 {
		fmt.Fprintln(os.Stderr, "bad chain size", patternArg)
		os.Exit(2)
	}
	link := reflect.StructOf([]reflect.StructField{
		{Name: "Next", Type: reflect.TypeFor[unsafe.Pointer]()},
		{Name: "Pad", Type: reflect.ArrayOf(m-8, reflect.TypeFor[byte]())},
	})
	var next unsafe.Pointer
	for range n {
		p := reflect.New(link).UnsafePointer()
		*(*unsafe.Pointer)(p) = next
		next = p
	}
	chain = next
	res.PayloadAddr = uint64(uintptr(chain))
}
