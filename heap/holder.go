package heap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/allochelper"
)

// maxOtherRoots is how many of the other roots that reach a shared object
// a Group lists.
const maxOtherRoots = 5

// Group is one entry of the holder report: objects held the same way (the
// same holder function or global, the same types along the path) with the
// holder, the path and the object of the first of them.
type Group struct {
	// Root is the holder: the root that keeps the objects alive.
	Root Holder `json:"root"`
	// Shared is set when no single root dominates the object: several
	// roots reach it, Root being the nearest; OtherRoots lists some of
	// the others and OtherRootsTotal counts them.
	Shared          bool     `json:"shared"`
	OtherRoots      []Holder `json:"other_roots"`
	OtherRootsTotal int      `json:"other_root_count"`
	// HeldBy names, for a group of objects no single root holds, every
	// holder that reaches its first object, by signature: "global
	// main.left", "timers that will run main.expire", "goroutines in
	// main.wait created at main.serve"; globals first, then timers, then
	// the rest. Empty for other groups.
	HeldBy []string `json:"held_by"`
	// Path is the reference chain from the root to the object, one typed
	// step per object, the object last.
	Path []Step `json:"path"`
	// Object is the retained object (of the first member of the group).
	Object Object `json:"object"`
	// OmittedSteps counts the steps of the path left out past the limit
	// on steps (MaxPathSteps): a Step with Omitted set stands for them.
	OmittedSteps int `json:"omitted_steps"`
	// Holding is set when the members are objects their holder holds
	// directly (a context, a map, a list) and counted for what they
	// retain beyond the large objects inside them, which have entries of
	// their own; unset when they are large objects.
	Holding bool `json:"holding"`
	// RetainedBytes and Objects are what the members retain together,
	// each byte once (see NestedCount);
	// EachMinBytes and EachMaxBytes are the least and the most one of
	// them retains.
	RetainedBytes uint64 `json:"retained_bytes"`
	Objects       uint64 `json:"retained_objects"`
	EachMinBytes  uint64 `json:"each_min_retained_bytes"`
	EachMaxBytes  uint64 `json:"each_max_retained_bytes"`
	// Count is the number of objects held this way; NestedCount how many
	// of them are inside another of them, and counted in RetainedBytes
	// once, with the outermost (a chain of large objects).
	Count       int `json:"object_count"`
	NestedCount int `json:"nested_count"`
	// Goroutines are ids of the goroutines whose frames or runtime.g hold
	// the objects, ascending, each once: several when goroutines alike
	// hold one object each; at most MaxGoroutineIDs of them, the first.
	// GoroutineCount counts them all. Empty for other holders.
	Goroutines     []uint64 `json:"goroutine_ids"`
	GoroutineCount int      `json:"goroutine_count"`
	// MadeOf says what the first member retains, by type: the largest
	// parts of its retained set, most bytes first; Inside is the path from
	// it to one object of the first part (through a container to one of
	// its entries). Both are empty when it retains only itself.
	MadeOf []Part `json:"made_of"`
	Inside []Step `json:"inside"`
	// MadeOfObjects counts the objects MadeOf adds up: all those the first
	// member retains but itself, or the first 262,143 found breadth first.
	MadeOfObjects uint64 `json:"made_of_objects"`
	// Mechanism is set when the group is one mechanism held by several
	// roots, whose parts it adds up (see Mechanism).
	Mechanism *Mechanism `json:"mechanism,omitempty"`
	// Leaked is set when a goroutineleak profile proved some of the
	// group's goroutines leaked (LeakedGoroutines): blocked for ever on
	// something nothing runnable reaches.
	Leaked *GroupLeak `json:"leaked,omitempty"`
}

// MaxGoroutineIDs is how many goroutine ids a Group lists.
const MaxGoroutineIDs = 100

// held is a Group being built, with what the report needs to group it and
// to list the other roots of a shared object.
type held struct {
	*Group
	key string // how the object is held, from its typed path
	// For a shared object: the top-most object of its dominator chain and
	// the nearest root.
	top, nearest heapdump.NodeID
	// avoid is the timer or runtime.g node a classified holder starts
	// from (NoNode for none), and object the group's object: the other
	// holders of object are the roots that reach it not through avoid.
	avoid, object heapdump.NodeID
	// end is the last step of the path, the group's object, typed.
	end typedStep
	// othersUnlisted is set on a shared group described by describeKeys
	// whose other roots exist but are not listed yet (listOtherRoots).
	othersUnlisted bool
}

// Holder is a root of the heap graph, described for people.
type Holder struct {
	// Kind is heapdump.RootFrame, heapdump.RootGoroutine, heapdump.RootDefer,
	// heapdump.RootPanic, heapdump.RootGlobal, RootTimer, heapdump.RootFinalizer
	// (for a queued finalizer too, with Detail "queued to run") or
	// heapdump.RootOther.
	Kind heapdump.RootKind `json:"kind"`
	// Goroutine, Status and CreatedBy describe the goroutine of a frame,
	// goroutine, defer or panic holder.
	Goroutine uint64           `json:"goroutine_id,omitempty"`
	Status    string           `json:"status,omitempty"`
	CreatedBy *binsym.Position `json:"created_by,omitempty"`
	// Function is the frame's function (for a defer, that of the frame
	// that deferred the call), or a timer's or finalizer's closure, with
	// its Location (file and line).
	Function string           `json:"function,omitempty"`
	Location *binsym.Position `json:"location,omitempty"`
	// Unsure is set when the executable was not there to tell the frame's
	// own slots from the arguments of its callee, named by Callee: the
	// holder is then Function or Callee.
	Unsure bool   `json:"unsure,omitempty"`
	Callee string `json:"callee,omitempty"`
	// Global is the global's symbol, or its address when unknown.
	Global string `json:"global,omitempty"`
	// Creator is where a timer was created (the allocation site of the
	// timer, when the dump has it).
	Creator *binsym.Position `json:"creator,omitempty"`
	// Detail says more in words: the runtime structure a timer or
	// goroutine holder was reached through, an other root's description.
	Detail string `json:"detail,omitempty"`
	// RetainedBytes and Objects are what this root alone keeps alive.
	RetainedBytes uint64 `json:"retained_bytes"`
	Objects       uint64 `json:"retained_objects"`
}

// Step is one object on a path from a root.
type Step struct {
	// Via is how the previous step (or the root) points to this object:
	// a field path such as ".Context" or ".val", "[3]", or "argument" /
	// "local" for a frame's slot. Empty when unknown.
	Via string `json:"via,omitempty"`
	// Type is the object's Go type, "" when unknown: a struct such as
	// "context.valueCtx", "[]uint8" for a slice's backing array,
	// "closure main.f.func1" for a func value.
	Type string `json:"type"`
	// Key is the key of the map entry the object is, when it is an
	// integer (a runtime/cgo handle's number, an int key of a sync.Map)
	// or a string: a literal of the executable quoted, its first 64 bytes
	// ("\"req-1\""), any other only its length ("a string of 9 bytes"),
	// since the dump's bytes are never printed.
	Key           string `json:"key,omitempty"`
	Addr          string `json:"addr"`
	Size          uint64 `json:"size_bytes"`
	RetainedBytes uint64 `json:"retained_bytes"`
	Objects       uint64 `json:"retained_objects"`
	// Omitted, when set, makes the step stand for that many steps left
	// out of a long path, through objects like the step before it (its
	// Type and Via are those of the steps left out); it has no address.
	Omitted int `json:"omitted_steps,omitempty"`
	// AllocSite is where a context node (context.cancelCtx, timerCtx,
	// valueCtx...) was made: the first frame of its allocation stack
	// outside the runtime and the context package, when the dump has a
	// sample. Unset for other steps.
	AllocSite *binsym.Position `json:"alloc_site,omitempty"`
}

// Object is the retained object a group stands for.
type Object struct {
	Type string `json:"type"`
	Addr string `json:"addr"`
	Size uint64 `json:"size_bytes"`
	// AllocSite is the first frame of the allocation stack outside the
	// runtime and allocation helpers; AllocStack is the whole stack,
	// innermost first. Both are empty when the dump has no sample for the
	// object (see runtime.MemProfileRate).
	AllocSite  *binsym.Position  `json:"alloc_site,omitempty"`
	AllocStack []binsym.Position `json:"alloc_stack"`
}

// Explain returns the holder of the object at each address: the root that
// keeps it alive, the typed path to it and what it retains. The result is
// parallel to addrs; an entry is nil when no object contains the address
// or no root reaches it (the object is garbage).
func (a *Analysis) Explain(addrs []uint64) ([]*Group, error) {
	out := make([]*Group, len(addrs))
	var objs []heapdump.NodeID
	var at []int
	for i, addr := range addrs {
		v, ok := a.g.Find(addr)
		if !ok || !a.reachable(v) {
			continue
		}
		objs = append(objs, v)
		at = append(at, i)
	}
	groups, err := a.describe(objs)
	if err != nil {
		return nil, err
	}
	for k, g := range groups {
		out[at[k]] = g.Group
	}
	return out, nil
}

// describe builds one ungrouped group per object: its holder, path, type
// and sizes. Paths are found root by root, one search for all the objects
// a root holds.
func (a *Analysis) describe(objs []heapdump.NodeID) ([]*held, error) {
	return a.describeObjects(objs, true)
}

// describeKeys is describe for the groups' keys: a shared group's other
// roots are only known to exist, and listOtherRoots lists them. Listing
// them walks back through every holding that reaches the object, which for
// each of 20,000 objects along a wait queue is the whole queue.
func (a *Analysis) describeKeys(objs []heapdump.NodeID) ([]*held, error) {
	return a.describeObjects(objs, false)
}

// describeObjects is describe, listing shared groups' other roots when
// listOthers is set.
func (a *Analysis) describeObjects(objs []heapdump.NodeID, listOthers bool) ([]*held, error) {
	out := make([]*held, len(objs))
	byRoot := map[heapdump.NodeID][]int{}
	var roots []heapdump.NodeID
	for i, v := range objs {
		r := a.rootOf(v)
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], i)
	}
	slices.Sort(roots)
	for _, r := range roots {
		idx := byRoot[r]
		targets := make([]heapdump.NodeID, len(idx))
		for k, i := range idx {
			targets[k] = objs[i]
		}
		paths := a.shortestPaths(r, targets)
		a.types.newSearch()
		for k, i := range idx {
			p := paths[k]
			if p == nil {
				return nil, errors.New("heap: internal error: no path from the dominating root")
			}
			g, err := a.group(p, listOthers)
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
	}
	return out, nil
}

// rootOf returns the root node that dominates object v, or the super-root
// when several roots reach it: the immediate dominator of its holding's
// top, or of the holding the runtime.g above it is in.
func (a *Analysis) rootOf(v heapdump.NodeID) heapdump.NodeID {
	for range 2 {
		t := a.topOf(v)
		if t == heapdump.NoNode {
			break
		}
		d := a.Idom(t)
		if !a.g.IsObject(d) {
			return d
		}
		v = d // a runtime.g: find what holds it
	}
	r, _ := a.holdingRoot(v)
	return r
}

// group describes the object at the end of p, a path from a root node or
// from the super-root; a shared object's other roots are listed when
// listOthers is set, else only found to exist (describeKeys).
func (a *Analysis) group(p []heapdump.NodeID, listOthers bool) (*held, error) {
	g := &held{Group: &Group{Count: 1}, avoid: heapdump.NoNode}
	p = a.finalizerHeld(p)
	if p[0] == a.g.SuperRoot() {
		g.Shared = true
		p = p[1:]
	}
	obj := p[len(p)-1]
	g.Root = a.holder(p[0])
	a.viaDefer(&g.Root, p)
	a.noteFinalizerCycle(&g.Root, p[0])
	steps, err := a.types.limitedSteps(p, a.maxSteps)
	if err != nil {
		return nil, err
	}
	steps, anchored := a.classify(&g.Root, steps)
	for _, s := range steps {
		g.Path = append(g.Path, a.withContextSite(s))
		g.OmittedSteps += s.Omitted
	}
	last := steps[len(steps)-1]
	g.end = last
	g.Object = Object{Type: last.Type, Addr: last.Addr, Size: last.Size}
	if b, ok := a.g.AllocSite(obj); ok {
		g.Object.AllocStack = slices.Clone(b.Stack)
		g.Object.AllocSite = firstSite(g.Object.AllocStack, allochelper.Is)
	}
	g.RetainedBytes = a.retained[obj]
	g.Objects = a.RetainedObjects(obj)
	g.EachMinBytes, g.EachMaxBytes = g.RetainedBytes, g.RetainedBytes
	if g.Shared {
		_, g.top = a.holdingRoot(obj)
		g.nearest = p[0]
		if anchored {
			// The holder is the timer or the runtime.g the path starts
			// from now. Every root that holds another timer of the same
			// P, or the goroutine, reaches the object through it: the
			// other holders are those that reach it some other way.
			g.avoid, g.object = steps[0].node, obj
		}
		others := false
		if listOthers {
			a.otherRoots(g)
			others = g.OtherRootsTotal > 0
		} else {
			others = a.hasOtherRoots(g)
			g.othersUnlisted = others
		}
		if _, ok := a.sharedSet(g.top); ok {
			g.HeldBy = a.heldBy(g.top)
		}
		if anchored {
			g.Shared = others
		}
		if !others && (g.Root.Kind != heapdump.RootGlobal || isRuntimeGlobal(g.Root)) {
			g.Shared = false // shared only with the runtime's structures
		}
	}
	if k := g.Root.Kind; k == heapdump.RootFrame || k == heapdump.RootGoroutine || k == heapdump.RootDefer || k == heapdump.RootPanic {
		g.Goroutines = []uint64{g.Root.Goroutine}
		g.GoroutineCount = 1
	}
	g.key = groupKey(g)
	return g, nil
}

// viaDefer makes h, the holder of path p from a frame's root, a defer of
// that frame when p starts at one of its defer records (or the closure of
// one): heapdump.RootDefer.
func (a *Analysis) viaDefer(h *Holder, p []heapdump.NodeID) {
	if len(p) < 2 || h.Kind != heapdump.RootFrame {
		return
	}
	if k := a.slotOf(p[0], p[1]); k >= 0 {
		if f := a.g.RootSlots(p[0])[k].Field; f == heapdump.FieldRecord || f == heapdump.FieldDefer {
			h.Kind, h.Detail = heapdump.RootDefer, DetailDefer
		}
	}
}

// otherRoots lists what else keeps a shared group's object alive: the
// roots other than the nearest that reach it, and goroutines whose pprof
// labels do, but for the runtime's own globals (allp, m0, allgs...), which
// reach much of the heap. It counts them all and lists maxOtherRoots,
// globals first, then timers, then the rest, each in the walk's order.
func (a *Analysis) otherRoots(g *held) {
	from, avoid := g.reachedFrom()
	// The first maxOtherRoots of each rank: globals, timers, the rest.
	var byRank [3][]Holder
	for _, r := range a.reachersOfObject(from, avoid) {
		if !a.isOtherRoot(g, avoid, r) {
			continue
		}
		g.OtherRootsTotal++
		rank := 2
		switch {
		case r.timer != heapdump.NoNode:
			rank = 1
		case r.root != heapdump.NoNode && a.g.Root(r.root).Kind == heapdump.RootGlobal:
			rank = 0
		}
		if len(byRank[rank]) >= maxOtherRoots {
			continue // counted, not described: 20,000 goroutines share it
		}
		var h Holder
		switch {
		case r.timer != heapdump.NoNode:
			h = a.timerHolder(r.timer)
		case r.root == heapdump.NoNode:
			h = Holder{Kind: heapdump.RootGoroutine, Detail: DetailLabels}
			a.describeGoroutine(&h, r.gIndex)
		default:
			h = a.holder(r.root)
		}
		byRank[rank] = append(byRank[rank], h)
	}
	// Globals and timers, few, come before the goroutines, many, so that
	// none hides among the roots counted but not listed.
	for _, hs := range byRank {
		g.OtherRoots = append(g.OtherRoots, hs[:min(len(hs), maxOtherRoots-len(g.OtherRoots))]...)
	}
}

// reachedFrom returns the node whose reachers are shared group g's other
// roots, and the node the walk back must not pass through (NoNode for
// none): the top of its holding, or, for a holder classified as a timer or
// a goroutine, the object itself and that holder.
func (g *held) reachedFrom() (from, avoid heapdump.NodeID) {
	if g.avoid != heapdump.NoNode {
		return g.object, g.avoid
	}
	return g.top, heapdump.NoNode
}

// isOtherRoot reports whether reacher r of shared group g's object, found
// not through avoid, is one of its other roots (otherRoots).
func (a *Analysis) isOtherRoot(g *held, avoid heapdump.NodeID, r reacher) bool {
	switch {
	case r.timer != heapdump.NoNode:
		return true
	case r.root == heapdump.NoNode:
		return g.avoid == heapdump.NoNode || r.g != g.avoid // not the goroutine that holds it
	}
	return !(r.root == g.nearest && avoid == heapdump.NoNode) && !a.isRuntimeGlobalRoot(r.root)
}

// hasOtherRoots reports whether shared group g's object has other roots:
// whether otherRoots would list any. It stops at the first.
func (a *Analysis) hasOtherRoots(g *held) bool {
	from, avoid := g.reachedFrom()
	found := false
	a.eachReacher(from, avoid, func(r reacher) bool {
		found = a.isOtherRoot(g, avoid, r)
		return !found
	})
	return found
}

// listOtherRoots lists the other roots of g, described by describeKeys,
// if it has any and they were not listed yet.
func (a *Analysis) listOtherRoots(g *held) {
	if g.othersUnlisted {
		g.othersUnlisted = false
		a.otherRoots(g)
	}
}

// The Detail of a goroutine holder says how the goroutine holds the object.
const (
	DetailLabels    = "its pprof labels"                                // the label set of its runtime.g
	DetailG         = "its runtime.g"                                   // another field of its runtime.g
	DetailUnstarted = "the closure of a goroutine that has not started" // its sched.ctxt
)

// The Detail of a defer or panic holder.
const (
	DetailDefer = "a call it deferred, not yet run (a defer record)" // a frame's defer record or its closure
	DetailPanic = "the value of a panic in progress"                 // a panic record's value
)

// firstSite returns the first site of stack whose function skip does not
// reject, or the first site when all are rejected.
func firstSite(stack []binsym.Position, skip func(string) bool) *binsym.Position {
	for i := range stack {
		if !skip(stack[i].Function) {
			return &stack[i]
		}
	}
	if len(stack) > 0 {
		return &stack[0]
	}
	return nil
}

// anyIndex matches the index of an array, slice or map group slot in a
// field path: objects held at different indices are held the same way.
var anyIndex = regexp.MustCompile(`\[\d+\]`)

// groupKey says how an object is held: the holder's kind and function or
// global, and the types along the path (and the fields, but not the
// indices, that lead from one to the next).
func groupKey(g *held) string {
	var b strings.Builder
	r := g.Root
	fmt.Fprintf(&b, "%s|%s|%s|%v", r.Kind, r.Function, r.Global, g.Shared)
	for _, s := range g.Path {
		via := s.Via
		if strings.IndexByte(via, '[') >= 0 { // most steps have no index
			via = anyIndex.ReplaceAllString(via, "[]")
		}
		b.WriteString("|" + via + ">" + s.Type)
	}
	return b.String()
}

// holder describes root node r.
func (a *Analysis) holder(r heapdump.NodeID) Holder {
	root := a.g.Root(r)
	h := Holder{RetainedBytes: a.retained[r], Objects: a.RetainedObjects(r)}
	switch root.Kind {
	case heapdump.RootFrame, heapdump.RootGoroutine:
		a.describeGoroutine(&h, root.Goroutine)
		if root.Kind == heapdump.RootGoroutine {
			h.Kind = heapdump.RootGoroutine
			h.Detail = DetailUnstarted
			break
		}
		h.Kind = heapdump.RootFrame
		h.Function = a.d.FrameFunc(root.Frame)
		h.Location = a.frameLine(h.Function, a.d.Frames[root.Frame].PC)
		if root.Unsure && root.Frame > 0 {
			h.Unsure = true
			h.Callee = a.d.FrameFunc(root.Frame - 1)
		}
	case heapdump.RootPanic:
		a.describeGoroutine(&h, root.Goroutine)
		h.Kind, h.Detail = heapdump.RootPanic, DetailPanic
	case heapdump.RootGlobal:
		h.Kind = heapdump.RootGlobal
		h.Global = a.g.RootName(root)
		if h.Global == "" {
			h.Global = fmt.Sprintf("%#x", root.Addr)
		}
		h.Detail = root.Segment.String() + " segment"
		if s, ok := a.staticOf(root); ok {
			h.Detail = a.staticDetail(s, root.Segment)
		}
	case heapdump.RootFinalizer, heapdump.RootQueuedFinalizer:
		h.Kind = heapdump.RootFinalizer // a queued one says so in Detail
		fin := a.d.Finalizers
		if root.Kind == heapdump.RootQueuedFinalizer {
			fin = a.d.QueuedFinalizers
			h.Detail = "queued to run"
		}
		if root.Index >= 0 && root.Index < len(fin) {
			if s := a.funcSite(fin[root.Index].FnPC); s != nil {
				h.Function, h.Location = s.Function, s
			}
		}

	default:
		h.Kind = heapdump.RootOther
		h.Detail = a.g.RootName(root)
	}
	return h
}

// describeGoroutine fills in the goroutine of a frame or goroutine holder.
func (a *Analysis) describeGoroutine(h *Holder, gi int) {
	if gi < 0 || gi >= len(a.d.Goroutines) {
		return
	}
	gr := &a.d.Goroutines[gi]
	h.Goroutine = gr.ID
	h.Status = gr.Status.String()
	if w := a.d.WaitReason(gi); w != "" {
		h.Status = w
	}
	if a.Binary != nil {
		if f, ok := a.siteOf(gr.GoPC); ok {
			h.CreatedBy = &binsym.Position{Function: f.Name, File: f.File, Line: f.Line}
		}
	}
}

// classify recognizes holders that the runtime's own structures stand for
// and rewrites h to name them: a goroutine whose runtime.g is on the path
// (its pprof labels, reached from runtime.allgs or its own stack), and a
// timer in a P's timer heap (runtime.allp -> P -> timers -> timer ->
// closure), named by its closure and its creator. It returns the steps from
// the g or the timer on.
func (a *Analysis) classify(h *Holder, steps []typedStep) ([]typedStep, bool) {
	for i, s := range steps {
		gi, ok := a.gObject(s.node)
		if !ok {
			continue
		}
		*h = Holder{
			Kind:          heapdump.RootGoroutine,
			Detail:        DetailG,
			RetainedBytes: s.RetainedBytes,
			Objects:       s.Objects,
		}
		if i+1 < len(steps) && steps[i+1].Via == ".labels" {
			h.Detail = DetailLabels
		}
		a.describeGoroutine(h, gi)
		steps[i].Via = ""
		return steps[i:], true
	}
	for i, s := range steps {
		if i == 0 || (s.closure == nil && !a.g.IsTimer(steps[i-1].node)) || !a.isTimer(h, steps[:i]) {
			continue
		}
		timer := steps[i-1]
		*h = a.timerHolder(timer.node)
		if s.closure != nil {
			h.Function, h.Location = s.closure.Function, s.closure
		}
		steps[i-1].Via = ""
		if steps[i-1].Type == "" {
			steps[i-1].Type = TimerType // recognised without the executable
		}
		steps[i].Via = "func"
		return steps[i-1:], true
	}
	return steps, false
}

// isTimer reports whether the last of steps, which points to a closure,
// is a runtime timer: it is typed as one, or reached through a P's timer
// heap, or the path starts at runtime.allp, which holds the Ps.
func (a *Analysis) isTimer(h *Holder, steps []typedStep) bool {
	last := steps[len(steps)-1]
	if a.g.IsTimer(last.node) {
		return true
	}
	switch typeName(last.t) {
	case TimerType, "time.Timer":
		return true
	}
	for _, s := range steps {
		if strings.Contains(s.Via, "timers.heap") {
			return true
		}
	}
	return h.Kind == heapdump.RootGlobal && h.Global == "runtime.allp"
}

// TimerType is the type a timer holder's path names its timer with, with
// or without the executable and whatever it carries: the runtime type the
// P's timer heap points to, not the struct around it, which only DWARF
// tells and Go releases change (runtime.timeTimer since Go 1.23; see
// binsym.Binary.ContainingType).
const TimerType = "runtime.timer"

// DetailTimer is the Detail of a timer holder.
const DetailTimer = "a timer in the runtime's timer heap"

// timerHolder describes timer t (see heapdump.Graph.IsTimer): the closure
// it will run, when the executable names one of the objects it points to,
// and where it was created, when the dump has its allocation site.
func (a *Analysis) timerHolder(t heapdump.NodeID) Holder {
	h := Holder{
		Kind:          heapdump.RootTimer,
		Detail:        DetailTimer,
		RetainedBytes: a.retained[t],
		Objects:       a.RetainedObjects(t),
	}
	if a.Binary != nil {
		var site *binsym.Position
		a.timerCode(t, func(pc uint64) bool {
			site = a.funcSite(pc)
			return site != nil
		})
		if site != nil {
			h.Function, h.Location = site.Function, site
		}
	}
	if h.Function == "" {
		if s := a.staticTimerFunc(t); s != nil {
			h.Function, h.Location = s.Function, s
			if s.Function == "time.sendTime" {
				h.Detail = DetailChanTimer
			}
		}
	}
	if b, ok := a.g.AllocSite(t); ok {
		if s := firstSite(b.Stack, isTimerMachinery); s != nil {
			c := *s // not a pointer into the dump's records
			h.Creator = &c
		}
	}
	return h
}

// timerCode returns the first code pointer among the objects timer t
// points to that accept takes, 0 for none: the function the timer runs.
func (a *Analysis) timerCode(t heapdump.NodeID, accept func(pc uint64) bool) uint64 {
	for _, w := range a.g.Succ(t) {
		if w == t {
			continue
		}
		if pc := a.codeWord(w); pc != 0 && accept(pc) {
			return pc
		}
	}
	return 0
}

// DetailChanTimer is the Detail of a timer holder that sends the time on a
// channel when it fires (time.NewTimer, time.After, time.NewTicker).
const DetailChanTimer = "a timer in the runtime's timer heap that sends on a channel"

// maxTimerWords bounds the words of a timer object staticTimerFunc reads.
const maxTimerWords = 32

// staticTimerFunc returns the function timer t will call when that is a
// static func value (time.sendTime for a timer of a channel, whose
// argument is the channel), which the graph has no edge to: the first word
// of the timer's object that points outside the heap to a word holding a
// function's entry. It returns nil without the executable or such a word.
func (a *Analysis) staticTimerFunc(t heapdump.NodeID) *binsym.Position {
	if a.Binary == nil {
		return nil
	}
	ps := int(a.d.Params.PtrSize)
	rec, err := a.g.ObjectRecord(t, maxTimerWords*ps)
	if err != nil || ps != 8 {
		return nil
	}
	for off := 0; off+ps <= len(rec.Contents); off += ps {
		w := a.g.Word(rec.Contents, int64(off))
		if w == 0 {
			continue
		}
		if _, inHeap := a.g.Find(w); inHeap {
			continue
		}
		b, ok := a.Binary.ReadData(w, ps)
		if !ok {
			continue
		}
		if s := a.funcSite(binary.LittleEndian.Uint64(b)); s != nil {
			return s
		}
	}
	return nil
}

// isTimerMachinery reports whether a function of a timer's allocation stack
// belongs to the runtime, time or context packages, which create timers on
// behalf of the code to be named.
func isTimerMachinery(fn string) bool {
	for _, p := range []string{"runtime.", "time.", "context.", "internal/"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}
