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
// Holders builds the report (Report). It groups first and thresholds
// second: large objects (of at least MinSize bytes) and holdings (objects
// a root, a goroutine's runtime.g or several roots hold directly) are
// grouped by how they are held, without typing them (the holder's
// signature and slot), and the groups that retain MinSize bytes in all
// are kept, largest first; only their first members are described (typed
// path, cut past MaxPathSteps; what they are made of). It renders as text
// (WriteText), JSON and a pprof profile (Profile). Explain describes the
// holders of chosen objects, as package retain does for a test.
//
// Options are values, as in Analyze(path, bin, Globals(syms...)) or
// a.Holders(MinSize(1<<20), Top(10)).
//
// The files call one another one way, each only those before it:
// options.go (the Options); static.go (values the linker allocated, named
// after the globals that point to them); analysis.go (the Analysis, its
// dominator tree); path.go (searches of the graph) and types.go (typing the
// objects on a path, with containers.go for sync.Pool, atomic pointers and
// hash-trie maps, interior.go for pointers into an object's middle and
// infer.go for objects typed back from the field that points on), which do
// not call each other; finalizer.go (finalizer cycles, and the
// other holders of a finalizer's object); group.go (holdings and their keys,
// grouped before the threshold); holder.go (describing holders and
// groups); madeof.go (what a group's first member retains); report.go (the
// report) and unknown.go (what it cannot tell without the binary, and
// plugins.go and cleanup.go: what the dump does not list as roots); text.go,
// json.go and pprof.go (rendering it); tree.go (the dominator tree node by
// node, and the paths to an object, for viewers such as package webview).
package heap
