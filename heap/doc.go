// Package heap says who holds the memory of a Go heap dump: which root (a
// goroutine's frame, a global, a timer, a goroutine's pprof labels...)
// keeps each large object alive, through which typed path, and how much it
// retains.
//
// Analyze reads a dump with package heapdump, with the help of the
// executable that wrote it (package binsym: source lines, argument sizes,
// symbols, types), and computes the dominator tree of its object graph. A
// node's retained size is what would be freed if it became unreachable; an
// object no single root dominates is shared, and the report lists the other
// roots that reach it.
//
// Holders builds the report (Report): the live objects of at least MinSize
// bytes and the holdings of roots that retain as much in small objects,
// grouped by how they are held, largest first; it renders as text
// (WriteText), JSON and a pprof profile (Profile). Explain describes the
// holders of chosen objects, as package retain does for a test.
//
// Options are values, as in Analyze(path, bin, Globals(syms...)) or
// a.Holders(MinSize(1<<20), Top(10)).
//
// The files call one another one way, each only those before it:
// options.go (the Options); analysis.go (the Analysis, its dominator tree);
// path.go (searches of the graph) and types.go (typing the objects on a
// path), which do not call each other; holder.go (holders and groups);
// report.go (the report) and unknown.go (what it cannot tell without the
// binary); text.go, json.go and pprof.go (rendering it); tree.go (the
// dominator tree node by node, and the paths to an object, for viewers
// such as package webview).
package heap
