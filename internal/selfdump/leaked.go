package selfdump

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"

	"github.com/ctxleak/ctxleak/internal/traceback"
)

// ErrLeakedGoroutines is wrapped by the error Write and WriteFile return
// when they refuse to dump a process that has goroutines the runtime marked
// leaked.
var ErrLeakedGoroutines = errors.New("goroutines marked leaked")

// LeakedError is the refusal to dump a process with goroutines in the
// runtime's leaked state. Go 1.27's goroutineleak profile (runtime/pprof)
// marks every goroutine it proves leaked with a new status, which
// runtime/debug.WriteHeapDump does not know: it stops the process with
// "fatal error: dumpgs in STW - bad status". The marks stay until the next
// such profile, which marks the same goroutines again, so a process that
// has leaked goroutines, once profiled, cannot be dumped again.
type LeakedError struct {
	// Count is the number of leaked goroutines the last goroutineleak
	// profile reported: at least one of them is still marked.
	Count int
}

func (e *LeakedError) Error() string {
	return fmt.Sprintf("refused to write a heap dump: a goroutineleak profile taken in this process "+
		"marked %d goroutine(s) leaked, and runtime/debug.WriteHeapDump (%s) dies on them "+
		"(\"dumpgs in STW - bad status\"); the marks last for the life of the process: "+
		"take heap dumps before any goroutineleak profile, or restart the process",
		e.Count, runtime.Version())
}

// Unwrap makes errors.Is(err, ErrLeakedGoroutines) true.
func (e *LeakedError) Unwrap() error { return ErrLeakedGoroutines }

// Check returns a *LeakedError if a heap dump of the process would find
// goroutines the runtime marked leaked, and nil when it is safe. On Go
// before 1.27 (no goroutineleak profile) it is always nil. It runs no
// collection and does not take the profile, which would mark goroutines.
//
// A goroutineleak profile that another goroutine of the process (a
// profiler agent, net/http/pprof) takes between Check and the dump is not
// seen: the profile's own lock is the runtime's. Write and WriteFile check
// just before the dump, under their lock, which keeps that window short.
func Check() error {
	p := pprof.Lookup("goroutineleak")
	if p == nil {
		return nil
	}
	// Count is the runtime's count from the last leak-detecting cycle,
	// without a new one. That cycle counts the main goroutine when it is
	// in select {} but then takes its mark back, so a count of 1 may mean
	// no marked goroutine at all: only then are the goroutines read.
	switch n := p.Count(); {
	case n == 0:
		return nil
	case n == 1 && !anyMarked():
		return nil
	default:
		return &LeakedError{Count: n}
	}
}

// maxStacks bounds the buffer anyMarked reads all goroutine stacks into.
const maxStacks = 64 << 20

// anyMarked reports whether any goroutine's header in a traceback of all
// goroutines carries the runtime's " (leaked)" status, or, when the
// traceback does not fit in maxStacks, true: it cannot tell, and a wrong
// no would kill the process.
func anyMarked() bool {
	stacks, cut := traceback.All(maxStacks)
	return cut || marked(stacks)
}

// marked reports whether a goroutine header line of the traceback stacks
// ("goroutine 7 [chan send (leaked), 3 minutes]:") has the leaked status.
// Only header lines count: a file path in a frame line could hold the
// same words.
func marked(stacks []byte) bool {
	for line := range bytes.Lines(stacks) {
		if _, _, leaked, _ := traceback.Header(string(bytes.TrimSuffix(line, []byte("\n")))); leaked {
			return true
		}
	}
	return false
}
