package heap

import "github.com/ctxleak/ctxleak/binsym"

// Part is one kind of object in what a group retains: objects of one type
// (or, without a type, of one size) and allocation site.
type Part struct {
	// Type is the objects' Go type, "" when unknown.
	Type string `json:"type"`
	// Size is the size of each object.
	Size uint64 `json:"size_bytes"`
	// AllocSite is where they were allocated, when the dump has a sample.
	AllocSite *binsym.Position `json:"alloc_site,omitempty"`
	// Count and Bytes add them up.
	Count uint64 `json:"object_count"`
	Bytes uint64 `json:"bytes"`
}
