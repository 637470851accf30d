package scenarios

import (
	"fmt"
	"runtime"
	"runtime/metrics"

	"github.com/ctxleak/ctxleak/internal/procmem"
)

// heapObjectsMetric is the live heap (plus unswept dead objects, none right
// after runtime.GC, which sweeps before returning).
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// liveHeapBytes reads the bytes occupied by heap objects.
func liveHeapBytes() (int64, error) {
	s := []metrics.Sample{{Name: heapObjectsMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, fmt.Errorf("runtime/metrics: %s is not supported", heapObjectsMetric)
	}
	return int64(s[0].Value.Uint64()), nil
}

// readRSS reads the process's resident set size from /proc/self/status.
func readRSS() (int64, error) { return procmem.Status("VmRSS") }

// inuseAt returns the bytes in use at the last completed GC cycle of the
// allocations whose stack contains the function fn: the inuse_space that
// the heap profile, written from the same records, gives that site. With
// MemProfileRate 1 (a scenario child's) the records are exact, not scaled.
// It reads the records directly rather than parsing a profile: a child
// samples every allocation, its own parsing included.
func inuseAt(fn string) int64 {
	n, _ := runtime.MemProfile(nil, false)
	var recs []runtime.MemProfileRecord
	for {
		recs = make([]runtime.MemProfileRecord, n+n/4+16)
		var ok bool
		if n, ok = runtime.MemProfile(recs, false); ok {
			recs = recs[:n]
			break
		}
	}
	has := map[uintptr]bool{} // whether a PC's frames, inlined ones included, are fn's
	var total int64
	for i := range recs {
		if stackHas(recs[i].Stack(), fn, has) {
			total += recs[i].InUseBytes()
		}
	}
	return total
}

// stackHas reports whether fn is one of the functions of stack, inlined
// calls included, remembering each PC's answer in has.
func stackHas(stack []uintptr, fn string, has map[uintptr]bool) bool {
	for _, pc := range stack {
		in, ok := has[pc]
		if !ok {
			frames := runtime.CallersFrames([]uintptr{pc})
			for {
				f, more := frames.Next()
				if f.Function == fn {
					in = true
				}
				if !more {
					break
				}
			}
			has[pc] = in
		}
		if in {
			return true
		}
	}
	return false
}
