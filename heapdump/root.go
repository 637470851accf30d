package heapdump

import (
	"fmt"
	"strconv"

	"github.com/ctxleak/ctxleak/binsym"
)

// Root is a root node of the graph. It holds no pointers, so that the
// collector need not scan the roots of 100,000 goroutines' frames: a
// global root's symbol and an other root's description are the graph's
// (Graph.RootName).
type Root struct {
	// Goroutine is the index in Dump.Goroutines of a frame, goroutine or
	// panic root's goroutine, else -1.
	Goroutine int
	// Frame is the index in Dump.Frames of the frame a frame root stands for,
	// else -1. Its slots may lie in the caller's frame (its arguments).
	Frame int
	// Addr is a global root's symbol start (or slot address when it has no
	// symbol), a finalizer root's object, an other root's address.
	Addr uint64
	// Index is the index of a panic, finalizer, queued finalizer or other
	// root in the Dump slice it comes from, else -1.
	Index int
	// Node is the root's node.
	Node NodeID
	// name is 1 plus the index in Graph.rootNames of the root's name, or 0.
	name            uint32
	slots, slotsEnd uint32
	Kind            RootKind // RootFrame, RootGoroutine, RootPanic, RootGlobal, RootFinalizer, RootQueuedFinalizer or RootOther
	// Unsure is set on a frame root whose callee's arguments could not be
	// told apart from its own slots (no OutArgs, or OutArgs did not know
	// the callee): the root is "frame Frame, or the arguments of its
	// callee, frame Frame-1".
	Unsure bool
	// Segment is the segment of a global root.
	Segment SegmentKind
}

// RootName returns the symbol of global root r when GlobalSymbol named it,
// the description of other root r, and "" for any other root.
func (g *Graph) RootName(r *Root) string { return oneBased(g.rootNames, r.name) }

// nameRoot sets the name of r, a global root's symbol or an other root's
// description (RootName).
func (g *Graph) nameRoot(r *Root, name string) {
	r.name = 0
	if name == "" {
		return
	}
	if n := len(g.rootNames); n > 0 && g.rootNames[n-1] == name {
		r.name = uint32(n) // a global's slots come one after another
		return
	}
	g.rootNames = append(g.rootNames, name)
	r.name = uint32(len(g.rootNames))
}

// RootSlot is one pointer of a root node: where it is and what it points to.
// It holds no pointers, so that the collector need not scan the slots of
// 100,000 goroutines.
type RootSlot struct {
	// Frame is the index in Dump.Frames of the frame whose memory holds the
	// slot (the caller's frame for an argument), or -1.
	Frame int
	// Offset is the slot's offset in that frame or in the segment.
	Offset uint64
	// Addr is the slot's address (frame SP or segment address plus
	// offset), or 0 for a field of a record.
	Addr  uint64
	Value uint64 // the pointer
	// StackObjectOffset is, for a slot inside one of the frame's stack
	// objects (Graph.StackObject), the object's start in the frame Frame.
	StackObjectOffset uint64
	Node              NodeID // the object it points into
	// stackObject is 1 plus the index in Graph.stackObjects of the stack
	// object the slot is in, or 0.
	stackObject uint32
	// Field names the record field of a slot that is not memory.
	Field SlotField
}

// InStackObject reports whether s lies in one of its frame's stack objects
// (Graph.StackObject).
func (s *RootSlot) InStackObject() bool { return s.stackObject != 0 }

// SlotField is the record field a root's slot is when it is not memory of
// a frame or a segment.
type SlotField uint8

// The record fields of slots.
const (
	FieldNone   SlotField = iota // memory of a frame or a segment
	FieldCtxt                    // a goroutine's closure to start
	FieldRecord                  // a frame's defer record that is an object (a defer in a loop, or under -race), which holds the closure
	FieldDefer                   // the closure of a frame's other defer
	FieldValue                   // a panic's value
	FieldObject                  // a finalizer's object
	FieldFn                      // a finalizer's closure
	FieldAddr                    // an other root's address
)

var slotFieldNames = [...]string{"", "ctxt", "record", "defer", "value", "object", "fn", "addr"}

// String returns the field's name: "ctxt", "record", "defer", "value",
// "object", "fn" or "addr", and "" for FieldNone.
func (f SlotField) String() string {
	if int(f) < len(slotFieldNames) {
		return slotFieldNames[f]
	}
	return "field" + strconv.Itoa(int(f))
}

// StackObject returns the stack object slot s is in (an address-taken
// local or argument, which the stack maps leave out; see
// Options.StackObjects) as the binary describes it, or nil.
// s.StackObjectOffset is the object's start in the frame s.Frame.
func (g *Graph) StackObject(s *RootSlot) *binsym.StackObject {
	return oneBased(g.stackObjects, s.stackObject)
}

// oneBased returns table[i-1], or the zero T for i 0 or past the table:
// records without pointers keep their strings and pointers so, 0 for none.
func oneBased[T any](table []T, i uint32) T {
	if i == 0 || int(i) > len(table) {
		var zero T
		return zero
	}
	return table[i-1]
}

// Root returns the root that root node v stands for, or nil when v is not
// a root node.
func (g *Graph) Root(v NodeID) *Root {
	i := int(v) - g.numObjects
	if int(v) < g.numObjects || i >= len(g.roots) {
		return nil
	}
	return &g.roots[i]
}

// ForEachRoot calls fn for every root, in node order, until fn returns
// false.
func (g *Graph) ForEachRoot(fn func(r *Root) bool) {
	for i := range g.roots {
		if !fn(&g.roots[i]) {
			return
		}
	}
}

// RootSlots returns the slots of root node v, parallel to its successors,
// or nil when v is not a root node. The caller must not modify them.
func (g *Graph) RootSlots(v NodeID) []RootSlot {
	r := g.Root(v)
	if r == nil {
		return nil
	}
	return g.rootSlots[r.slots:r.slotsEnd:r.slotsEnd]
}

// RootKind says what kind of root holds memory. It is the one root kind of
// ctxleak: the graph's root nodes (Root.Kind) and heap's holders use it.
//
// Load produces RootFrame, RootGoroutine, RootPanic, RootGlobal,
// RootFinalizer, RootQueuedFinalizer and RootOther. RootDefer is a frame
// root's defer slots (RootSlot.Field FieldRecord or FieldDefer), which package
// heap names apart. RootTimer is never in a dump: the
// runtime keeps timers in its own structures, and package heap derives a
// timer holder from the path through them.
type RootKind uint8

// The kinds of root. Their String and text forms are the words in
// parentheses.
const (
	RootFrame           RootKind = iota + 1 // a goroutine stack frame ("frame")
	RootGoroutine                           // a goroutine itself: its sched.ctxt, its runtime.g ("goroutine")
	RootGlobal                              // a global in the data or bss segment ("global")
	RootFinalizer                           // an object with a finalizer, and the finalizer ("finalizer")
	RootQueuedFinalizer                     // a finalizer queued to run, with its object ("queued finalizer")
	RootOther                               // an "other root" record ("other")
	RootTimer                               // a timer in the runtime's timer heap ("timer"); derived by heap
	RootDefer                               // a call a frame deferred, its defer record ("defer"); derived by heap
	RootPanic                               // the value of a panic in progress ("panic")
)

var rootKindNames = [...]string{
	RootFrame:           "frame",
	RootGoroutine:       "goroutine",
	RootGlobal:          "global",
	RootFinalizer:       "finalizer",
	RootQueuedFinalizer: "queued finalizer",
	RootOther:           "other",
	RootTimer:           "timer",
	RootDefer:           "defer",
	RootPanic:           "panic",
}

// String returns the kind's name, "unknown" for the zero value.
func (k RootKind) String() string {
	if int(k) < len(rootKindNames) && rootKindNames[k] != "" {
		return rootKindNames[k]
	}
	return "unknown"
}

// MarshalText writes the kind's name, as String does.
func (k RootKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name.
func (k *RootKind) UnmarshalText(b []byte) error {
	for i, n := range rootKindNames {
		if n != "" && n == string(b) {
			*k = RootKind(i)
			return nil
		}
	}
	return fmt.Errorf("heapdump: unknown root kind %q", b)
}
