package heap

import (
	"fmt"

	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// runtime.AddCleanup(ptr, cleanup, arg) keeps, in a special record of
// ptr's span, an adapter closure (runtime.AddCleanup[...].func1), the
// cleanup and a box holding arg, which the garbage collector scans as
// roots while ptr lives. The heap dump does not record cleanups (only
// finalizers), so the box, and what only it holds, is counted as dead, and
// nothing in the dump links it to its cleanup. cleanupUnknown says so when
// adapter closures are among the dead objects: each is a cleanup that has
// not run. It looks only when the dead objects add up to cleanupDeadMin
// (or the MinSize given to Analyze, when less): less hides nothing worth
// a report, and most dumps are written after a GC, with little dead.

// maxDeadChecked bounds the dead objects cleanupUnknown reads;
// cleanupDeadMin is the least of dead bytes it looks into;
// cleanupClosureSize is the size of an adapter closure (a code pointer and
// the generic function's dictionary), the only size it reads.
const (
	maxDeadChecked     = 1 << 16
	cleanupDeadMin     = 256 << 10
	cleanupClosureSize = 16
)

// cleanupFuncPrefix starts the name of runtime.AddCleanup's closures.
const cleanupFuncPrefix = "runtime.AddCleanup["

// cleanupUnknown returns the warning about cleanups' closures among the
// dead objects, false when there are none (or no executable to name them).
func (a *Analysis) cleanupUnknown() (Unknown, bool) {
	bin := a.Binary
	if bin == nil || a.stats.DeadBytes < min(a.opts.minSize, cleanupDeadMin) {
		return Unknown{}, false // too little is dead for a report to miss
	}
	entries := bin.FuncsWithPrefix(cleanupFuncPrefix, 1<<12)
	if len(entries) == 0 {
		return Unknown{}, false // the program registers no cleanups: no pass
	}
	isCleanup := make(map[uint64]bool, len(entries))
	for _, e := range entries {
		isCleanup[e] = true
	}
	g := a.g
	var closures []heapdump.NodeID
	checked := 0
	for v := heapdump.NodeID(0); g.IsObject(v) && checked < maxDeadChecked; v++ {
		if a.Reachable(v) {
			continue
		}
		if g.Size(v) != cleanupClosureSize {
			continue
		}
		checked++
		rec, err := g.ObjectRecord(v, 8)
		if err != nil || len(rec.Contents) < 8 {
			continue
		}
		if isCleanup[g.Word(rec.Contents, 0)] {
			closures = append(closures, v)
		}
	}
	if len(closures) == 0 {
		return Unknown{}, false
	}
	first := ""
	if rec, err := g.ObjectRecord(closures[0], 8); err == nil {
		first = fmt.Sprintf(", the first at %#x", rec.Addr)
	}
	n := len(closures)
	return Unknown{Reason: CleanupClosures, Text: textsafe.Escape(fmt.Sprintf(
		"%s registered with runtime.AddCleanup %s not run (their adapter closures are among the dead objects%s): "+
			"the dump does not list cleanups as roots, so a cleanup's argument and what only it holds are counted as dead, "+
			"though they live as long as the object the cleanup is attached to",
		english.Plural(n, "cleanup"), hasHave(n), first))}, true
}

// hasHave is "has" for one, "have" for more.
func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}
