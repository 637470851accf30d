package heap

import "github.com/ctxleak/ctxleak/heapdump"

// DetailFinalizerCycle is the Detail of a finalizer holder whose object
// reaches itself: the garbage collector marks what an object with a
// finalizer points to, so such an object is never unreachable, and its
// finalizer never runs.
const DetailFinalizerCycle = "its object reaches itself, so the finalizer can never run and the object is never freed"

// noteFinalizerCycle sets the Detail of holder h, root node r, when r is a
// finalizer whose object reaches itself. It is asked of a group's holder
// only: the search costs up to the objects the finalizer's object reaches.
func (a *Analysis) noteFinalizerCycle(h *Holder, r heapdump.NodeID) {
	root := a.g.Root(r)
	if root == nil || root.Kind != heapdump.RootFinalizer {
		return
	}
	if v, ok := a.g.Find(root.Addr); ok && a.reachesItself(v) {
		h.Detail = DetailFinalizerCycle
	}
}

// reachesItself reports whether object v is on a cycle: whether a path
// through one or more other objects leads from v back to v. A pointer of v
// to itself does not count: the collector's scan of an object skips the
// pointers into it (runtime.scanobject), so such a finalizer runs. The search is breadth
// first over what v reaches, each object once, and stops at v. The
// searches of one analysis visit at most four times the nodes of the graph
// in all; past that, reachesItself says false.
func (a *Analysis) reachesItself(v heapdump.NodeID) bool {
	if a.types.finCycle == nil {
		a.types.finCycle = map[heapdump.NodeID]bool{}
	}
	if r, ok := a.types.finCycle[v]; ok {
		return r
	}
	if a.types.finBudget == 0 {
		a.types.finBudget = 4*a.g.NumNodes() + 1
	}
	if a.types.finSeen == nil {
		a.types.finSeen = make([]uint64, (a.g.NumObjects()+63)/64)
	}
	seen := a.types.finSeen
	queue := []heapdump.NodeID{v}
	defer func() { // clear what was marked, for the next search
		for _, w := range queue[1:] {
			seen[w/64] &^= 1 << (w % 64)
		}
	}()
	found := false
	for head := 0; head < len(queue) && !found; head++ {
		if a.types.finBudget--; a.types.finBudget <= 0 {
			// The searches of a report, together, visit at most four
			// times the graph: past that, no finalizer is diagnosed.
			a.types.finBudget = -1
			return false
		}
		u := queue[head]
		for _, w := range a.g.Succ(u) {
			if w == v && u == v {
				continue // the collector does not mark an object from itself
			}
			if w == v {
				found = true
				break
			}
			if !a.g.IsObject(w) || seen[w/64]&(1<<(w%64)) != 0 {
				continue
			}
			seen[w/64] |= 1 << (w % 64)
			queue = append(queue, w)
		}
	}
	a.types.finCycle[v] = found
	return found
}

// finalizerHeld returns path p, a path from the super-root to a shared
// object, searched again from a root other than a finalizer when p starts
// at a finalizer root (not queued) and another root reaches the object.
// The garbage collector marks what an object with a finalizer points to,
// not the object itself: another root that reaches the object is what
// keeps it alive. p is returned as it is otherwise.
func (a *Analysis) finalizerHeld(p []heapdump.NodeID) []heapdump.NodeID {
	if len(p) < 3 || p[0] != a.g.SuperRoot() {
		return p
	}
	if r := a.g.Root(p[1]); r == nil || r.Kind != heapdump.RootFinalizer {
		return p
	}
	obj := p[len(p)-1]
	best := heapdump.NoNode
	for _, r := range a.reachersOfObject(obj, p[1]) {
		if r.root == heapdump.NoNode || a.g.IsObject(r.root) {
			continue
		}
		if k := a.g.Root(r.root).Kind; k == heapdump.RootFinalizer || k == heapdump.RootQueuedFinalizer {
			continue
		}
		if best == heapdump.NoNode || r.root < best {
			best = r.root
		}
	}
	if best == heapdump.NoNode {
		return p
	}
	q := a.shortestPaths(best, []heapdump.NodeID{obj})[0]
	if q == nil {
		return p
	}
	// The typer's memo holds the steps of the search p came from.
	a.types.newSearch()
	return append([]heapdump.NodeID{a.g.SuperRoot()}, q...)
}
