// Package dotpkg has a dot in the last element of its import path, which
// the linker escapes in symbol (and DWARF) names.
package dotpkg

// Thing is a named struct type.
type Thing struct {
	Name string
	Next *Thing
}
