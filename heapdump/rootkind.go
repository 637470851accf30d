package heapdump

import "fmt"

// RootKind says what kind of root holds memory. It is the one root kind of
// ctxleak: the graph's root nodes (Root.Kind) and heap's holders use it.
//
// Load produces RootFrame, RootGoroutine, RootGlobal, RootFinalizer,
// RootQueuedFinalizer and RootOther. RootTimer is never in a dump: the
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
)

var rootKindNames = [...]string{
	RootFrame:           "frame",
	RootGoroutine:       "goroutine",
	RootGlobal:          "global",
	RootFinalizer:       "finalizer",
	RootQueuedFinalizer: "queued finalizer",
	RootOther:           "other",
	RootTimer:           "timer",
}

// String returns the kind's name, "unknown" for the zero value.
func (k RootKind) String() string {
	if int(k) < len(rootKindNames) && rootKindNames[k] != "" {
		return rootKindNames[k]
	}
	return "unknown"
}

// MarshalText writes the kind's name.
func (k RootKind) MarshalText() ([]byte, error) {
	if k == 0 || int(k) >= len(rootKindNames) {
		return nil, fmt.Errorf("heapdump: root kind %d has no name", k)
	}
	return []byte(rootKindNames[k]), nil
}

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
