// Command payload is a Go plugin (go build -buildmode=plugin) whose global
// holds a buffer: the heap dump of the program that loads it records the
// program's globals only.
package main

import "unsafe"

// Held is the plugin's global.
var Held []byte

// Hold makes Held a buffer of n bytes and returns its address.
func Hold(n int) uint64 {
	Held = make([]byte, n)
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(Held))))
}
