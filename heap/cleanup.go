package heap

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
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
// maxCleanupClosure is the largest adapter closure, the only objects whose
// first word it reads: a code pointer and the generic function's
// dictionary since Go 1.26 (16 bytes), and also the cleanup and its
// argument's box before (32 bytes).
const (
	maxDeadChecked    = 1 << 16
	cleanupDeadMin    = 256 << 10
	maxCleanupClosure = 32
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
	// The dead objects to check and, among them, those small enough to be
	// a closure, whose first words are read in one pass forward through
	// the file.
	g := a.g
	var dead, small []heapdump.NodeID
	for v := heapdump.NodeID(0); g.IsObject(v) && len(dead) < maxDeadChecked; v++ {
		if !a.Reachable(v) {
			dead = append(dead, v)
			if g.Size(v) <= maxCleanupClosure {
				small = append(small, v)
			}
		}
	}
	// A record that cannot be read again ends the search, with the closures
	// found before it, in increasing order as small is.
	var closures, boxes []heapdump.NodeID
	_ = g.ObjectWords(small, 0, func(v heapdump.NodeID, word uint64) error {
		if isCleanup[word] {
			closures = append(closures, v)
		}
		return nil
	})
	if len(closures) == 0 {
		return Unknown{}, false
	}
	for _, v := range dead {
		if _, isClosure := slices.BinarySearch(closures, v); !isClosure && madeByAddCleanup(g, v) {
			boxes = append(boxes, v) // the box of a cleanup's argument
		}
	}
	first := ""
	if rec, err := g.ObjectRecord(closures[0], 8); err == nil {
		first = fmt.Sprintf(", the first at %#x", rec.Addr)
	}
	args := ""
	if len(boxes) > 0 {
		bytes, objects := a.deadReach(boxes)
		args = fmt.Sprintf("; the boxes of their arguments (%s, allocated in runtime.AddCleanup) reach %s in %s no root reaches",
			english.Plural(len(boxes), "object"), bytesize.Format(int64(bytes)), english.Plural(objects, "object"))
	}
	n := len(closures)
	return Unknown{Reason: CleanupClosures, Text: textsafe.Escape(fmt.Sprintf(
		"%s registered with runtime.AddCleanup %s not run (their adapter closures are among the dead objects%s%s): "+
			"the dump does not list cleanups as roots, so a cleanup's argument and what only it holds are counted as dead, "+
			"though they live as long as the object the cleanup is attached to",
		english.Plural(n, "cleanup"), hasHave(n), first, args))}, true
}

// madeByAddCleanup reports whether the dump's allocation sample of object
// v says runtime.AddCleanup allocated it (new(S), the box of a cleanup's
// argument, or its adapter closure).
func madeByAddCleanup(g *heapdump.Graph, v heapdump.NodeID) bool {
	b, ok := g.AllocSite(v)
	if !ok {
		return false
	}
	for i, p := range b.Stack {
		if i >= 4 {
			break
		}
		if strings.HasPrefix(p.Function, cleanupFuncPrefix) {
			return true
		}
	}
	return false
}

// maxDeadReach bounds the objects deadReach visits.
const maxDeadReach = 1 << 16

// deadReach returns the bytes and the number of the objects that from
// reach through objects no root reaches, from included: the graph keeps no
// edges out of dead objects, so it reads their records.
func (a *Analysis) deadReach(from []heapdump.NodeID) (uint64, int) {
	g := a.g
	seen := make(map[heapdump.NodeID]bool, len(from))
	queue := make([]heapdump.NodeID, 0, len(from))
	for _, v := range from {
		if !seen[v] {
			seen[v] = true
			queue = append(queue, v)
		}
	}
	var bytes uint64
	for head := 0; head < len(queue); head++ {
		v := queue[head]
		bytes += g.Size(v)
		rec, err := g.ObjectRecord(v, 64)
		if err != nil {
			continue
		}
		for _, off := range rec.PtrOffsets {
			w, ok := g.Find(rec.Word(int64(off)))
			if ok && !seen[w] && len(seen) < maxDeadReach && g.IsObject(w) && !a.Reachable(w) {
				seen[w] = true
				queue = append(queue, w)
			}
		}
	}
	return bytes, len(queue)
}

// hasHave is "has" for one, "have" for more.
func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}
