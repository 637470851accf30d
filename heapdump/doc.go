// Package heapdump reads Go heap dumps, as written by
// runtime/debug.WriteHeapDump in Go 1.22 to 1.27 (header "go1.7 heap dump"),
// and builds their object graph.
//
// Load (or Read) reads a dump in one pass. It keeps every record but the
// objects' contents (see Dump): goroutines and their frames with the pointer
// slots the runtime's stack maps chose, the data and bss segments, types,
// itabs, finalizers, OS threads, defers, panics, memstats and the memory
// profile with its alloc samples. Objects are indexed by address, so an
// interior pointer resolves to the object that contains it (Find).
//
// On a dump of 64 MiB or more, a helper goroutine reads parts of the object
// records at the same time, each with a parser of its own, and the main
// parser takes their work as it reaches them: the graph is the one a single
// parser builds. Options.Progress hears how many of the file's bytes the
// parsers have read, for a status line. On Linux, the parsers read an
// *os.File through a window of it mapped into memory rather than copies;
// a file that shrinks meanwhile gives the same *FormatError as when they
// copy, not a fault.
//
// The Graph numbers its nodes with NodeID: objects first, then one root node
// per root (a goroutine frame with its defer records, a panic, a global,
// a finalizer...; see Root and RootKind), then a super-root that points to
// every root node. Succ gives a node's successors; Size, ObjectAddr,
// AllocSite and RootSlots describe nodes; IsTimer tells the timers of the
// runtime's timer heaps, found by their shape. The layout suits a dominator computation, which package heap does.
//
// Liveness is what the runtime wrote: frames are never scanned
// conservatively, so a goroutine that no longer uses its context does not
// hold it. The stack maps leave out a frame's stack objects (address-taken
// locals, such as the value of a blocked `ch <- v`): with
// Options.StackObjects, those a pointer on their goroutine's stack reaches
// add their pointers to the frame's root, as the garbage collector scans
// them. Live means reachable from a root; dead objects and the fake
// objects the runtime writes for the unused tail of spans only count in
// Stats, which, like Live, searches the graph on first use.
//
// The contents of objects, frames and the data and bss segments stay in
// the file. The few a report needs (interface type words, closure code
// pointers) are read back on demand through Contents, the one way to read
// them after parsing, which the lengths the parser accepted bound: a word,
// or at most MaxRead bytes at a time, whatever size a record claims.
// ObjectRecord reads an object's first bytes and its pointer offsets
// (ObjectWords one word of many, in one pass), FrameContents and
// Segment.Contents name a frame's and a segment's. A frame's function name
// and pointer slots are Dump.FrameFunc and Dump.FrameSlots.
//
// Malformed input gives a *FormatError naming the byte offset and the kind
// of record; the reader never panics and never allocates from a length it
// has not checked against the size of the file. A dump whose records would
// take more memory than its budget (Options.MemoryLimit, by default 128 MiB
// plus 1.5 times the bytes the file holds, its holes left out) gives a
// *MemoryLimitError.
package heapdump
