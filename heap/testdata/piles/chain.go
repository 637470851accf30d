package main

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"
)

// Patterns of large objects inside one another:
//   - chain:M N: the global main.chain holds a chain of N objects of M
//     bytes each (at least 8), each an array of pointers whose first
//     points to the next: every object retains all those after it.
func init() {
	patterns["chain"] = chainPile
}

// chain is the first object of the chain.
var chain []unsafe.Pointer

// chainPile builds the chain of n objects of the size patternArg says.
func chainPile(n int, res *result) {
	m, err := strconv.Atoi(patternArg)
	if err != nil || m < 8 {
		fmt.Fprintln(os.Stderr, "bad chain size", patternArg)
		os.Exit(2)
	}
	var next []unsafe.Pointer
	for range n {
		link := make([]unsafe.Pointer, m/8)
		if next != nil {
			link[0] = unsafe.Pointer(unsafe.SliceData(next))
		}
		next = link
	}
	chain = next
	res.PayloadAddr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(chain))))
}
