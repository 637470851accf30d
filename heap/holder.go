package heap

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/allochelper"
)

// Kinds of holder, as Holder.Kind names them.
const (
	KindFrame     = "frame"     // a goroutine's stack frame
	KindGoroutine = "goroutine" // a goroutine itself: its runtime.g (pprof labels) or unstarted closure
	KindGlobal    = "global"    // a package-level variable
	KindTimer     = "timer"     // a timer in the runtime's timer heap, and its closure
	KindFinalizer = "finalizer" // an object with a finalizer, or a queued finalizer
	KindOther     = "other"     // any other root the runtime names
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
	// Path is the reference chain from the root to the object, one typed
	// step per object, the object last.
	Path []Step `json:"path"`
	// Object is the retained object (of the first member of the group).
	Object Object `json:"object"`
	// RetainedBytes and Objects add up what the members retain.
	RetainedBytes uint64 `json:"retained_bytes"`
	Objects       uint64 `json:"retained_objects"`
	// Count is the number of objects held this way.
	Count int `json:"object_count"`

	key string
	// For a shared object: the top-most object of its dominator chain,
	// the nearest root, and whether OtherRoots are yet to be listed.
	top, nearest uint32
	rootsPending bool
	// avoid is, plus one, the timer or runtime.g node a classified holder
	// starts from (0 for none), and object the group's object: the other
	// holders of object are the roots that reach it not through avoid.
	avoid, object uint32
}

// Holder is a root of the heap graph, described for people.
type Holder struct {
	// Kind is one of KindFrame, KindGoroutine, KindGlobal, KindTimer,
	// KindFinalizer or KindOther.
	Kind string `json:"kind"`
	// Goroutine, Status and CreatedBy describe the goroutine of a frame
	// or goroutine holder.
	Goroutine uint64 `json:"goroutine_id,omitempty"`
	Status    string `json:"status,omitempty"`
	CreatedBy *Site  `json:"created_by,omitempty"`
	// Function is the frame's function, or a timer's or finalizer's
	// closure, with its Location (file and line).
	Function string `json:"function,omitempty"`
	Location *Site  `json:"location,omitempty"`
	// Unsure is set when the executable was not there to tell the frame's
	// own slots from the arguments of its callee, named by Callee: the
	// holder is then Function or Callee.
	Unsure bool   `json:"unsure,omitempty"`
	Callee string `json:"callee,omitempty"`
	// Global is the global's symbol, or its address when unknown.
	Global string `json:"global,omitempty"`
	// Creator is where a timer was created (the allocation site of the
	// timer, when the dump has it).
	Creator *Site `json:"creator,omitempty"`
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
	Type          string `json:"type"`
	Addr          string `json:"addr"`
	Size          uint64 `json:"size_bytes"`
	RetainedBytes uint64 `json:"retained_bytes"`
	Objects       uint64 `json:"retained_objects"`
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
	AllocSite  *Site  `json:"alloc_site,omitempty"`
	AllocStack []Site `json:"alloc_stack"`
}

// Site is a function and a source position.
type Site struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

// String formats s as "function (dir/file.go:line)", with the last two
// elements of the file's path.
func (s Site) String() string {
	if s.File == "" {
		return s.Function
	}
	return s.Function + " (" + s.Position() + ")"
}

// Position formats where s is as "dir/file.go:line", with the last two
// elements of the file's path, or "" when the file is unknown.
func (s Site) Position() string {
	if s.File == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", shortFile(s.File), s.Line)
}

// shortFile keeps the last two elements of a file path.
func shortFile(file string) string {
	dir, base := path.Split(file)
	if dir == "" {
		return base
	}
	return path.Join(path.Base(dir), base)
}

// rootNode returns the Roots entry of root node r.
func (a *Analysis) rootNode(r uint32) *Root { return &a.Roots[int(r)-a.NumObjects] }

// group describes the object at the end of p, a path from a root node or
// from the super-root. When lazy is set, it finds whether other roots reach
// a shared object from a.reach and leaves listing them to otherRoots.
func (a *Analysis) group(p []uint32, lazy bool) (*Group, error) {
	g := &Group{Count: 1}
	if p[0] == a.SuperRoot {
		g.Shared = true
		p = p[1:]
	}
	obj := p[len(p)-1]
	g.Root = a.holder(p[0])
	steps, err := a.types.steps(p)
	if err != nil {
		return nil, err
	}
	steps, anchored := a.classify(&g.Root, steps)
	for _, s := range steps {
		g.Path = append(g.Path, s.Step)
	}
	last := steps[len(steps)-1]
	g.Object = Object{Type: last.Type, Addr: last.Addr, Size: last.Size}
	if b, ok := a.AllocSite(obj); ok {
		g.Object.AllocStack = make([]Site, len(b.Stack))
		for i, f := range b.Stack {
			g.Object.AllocStack[i] = Site{Function: f.Func, File: f.File, Line: int(f.Line)}
		}
		g.Object.AllocSite = firstSite(g.Object.AllocStack, allochelper.Is)
	}
	g.RetainedBytes = a.retained[obj]
	g.Objects = a.RetainedObjects(obj)
	if g.Shared {
		_, g.top = a.holdingRoot(obj)
		g.nearest = p[0]
		var others bool
		if anchored {
			// The holder is the timer or the runtime.g the path starts
			// from now. Every root that holds another timer of the same
			// P, or the goroutine, reaches the object through it: the
			// other holders are those that reach it some other way.
			g.avoid, g.object = steps[0].node+1, obj
			a.otherRoots(g, !lazy)
			others = g.OtherRootsTotal > 0
			g.Shared = others
		} else if lazy {
			others = a.reach.other(g.top, g.nearest)
			g.rootsPending = others
		} else {
			a.otherRoots(g, true)
			others = g.OtherRootsTotal > 0
		}
		if !others && (g.Root.Kind != KindGlobal || isRuntimeGlobal(g.Root)) {
			g.Shared = false // shared only with the runtime's structures
		}
	}
	g.key = groupKey(g)
	return g, nil
}

// otherRoots lists what else keeps a shared group's object alive: the
// roots other than the nearest that reach it, and goroutines whose pprof
// labels do, but for the runtime's own globals (allp, m0, allgs...), which
// reach much of the heap. All are listed when all is set, else the first
// maxOtherRoots.
func (a *Analysis) otherRoots(g *Group, all bool) {
	g.rootsPending = false
	from, avoid := g.top, noNode
	if g.avoid != 0 {
		from, avoid = g.object, g.avoid-1
	}
	for _, r := range a.reachersOfObject(from, avoid) {
		var h Holder
		if r.root == noNode {
			if g.avoid != 0 && r.g == g.avoid-1 {
				continue // the goroutine that holds it
			}
			h = Holder{Kind: KindGoroutine, Detail: DetailLabels}
			a.describeGoroutine(&h, r.gIndex)
		} else {
			if r.root == g.nearest && avoid == noNode {
				continue
			}
			h = a.holder(r.root)
			if isRuntimeGlobal(h) {
				continue
			}
		}
		g.OtherRootsTotal++
		if all || len(g.OtherRoots) < maxOtherRoots {
			g.OtherRoots = append(g.OtherRoots, h)
		}
	}
}

// The Detail of a goroutine holder says how the goroutine holds the object.
const (
	DetailLabels    = "its pprof labels"                                // the label set of its runtime.g
	DetailG         = "its runtime.g"                                   // another field of its runtime.g
	DetailUnstarted = "the closure of a goroutine that has not started" // its sched.ctxt
)

// firstSite returns the first site of stack whose function skip does not
// reject, or the first site when all are rejected.
func firstSite(stack []Site, skip func(string) bool) *Site {
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
func groupKey(g *Group) string {
	var b strings.Builder
	r := g.Root
	fmt.Fprintf(&b, "%s|%s|%s|%v", r.Kind, r.Function, r.Global, g.Shared)
	for _, s := range g.Path {
		b.WriteString("|" + anyIndex.ReplaceAllString(s.Via, "[]") + ">" + s.Type)
	}
	return b.String()
}

// holder describes root node r.
func (a *Analysis) holder(r uint32) Holder {
	root := a.rootNode(r)
	h := Holder{RetainedBytes: a.retained[r], Objects: a.RetainedObjects(r)}
	switch root.Kind {
	case RootFrame, RootGoroutine:
		a.describeGoroutine(&h, root.Goroutine)
		if root.Kind == RootGoroutine {
			h.Kind = KindGoroutine
			h.Detail = DetailUnstarted
			break
		}
		h.Kind = KindFrame
		f := &a.Frames[root.Frame]
		h.Function = f.Func
		h.Location = a.callSite(f.Func, f.PC)
		if root.Unsure && root.Frame > 0 {
			h.Unsure = true
			h.Callee = a.Frames[root.Frame-1].Func
		}
	case RootGlobal:
		h.Kind = KindGlobal
		h.Global = root.Symbol
		if h.Global == "" {
			h.Global = fmt.Sprintf("%#x", root.Addr)
		}
		h.Detail = root.Segment.String() + " segment"
	case RootFinalizer, RootQueuedFinalizer:
		h.Kind = KindFinalizer
		fin := a.Finalizers
		if root.Kind == RootQueuedFinalizer {
			fin = a.QueuedFinalizers
			h.Detail = "queued to run"
		}
		if root.Index >= 0 && root.Index < len(fin) {
			if s := a.funcSite(fin[root.Index].FnPC); s != nil {
				h.Function, h.Location = s.Function, s
			}
		}
	default:
		h.Kind = KindOther
		h.Detail = root.Desc
	}
	return h
}

// describeGoroutine fills in the goroutine of a frame or goroutine holder.
func (a *Analysis) describeGoroutine(h *Holder, gi int) {
	if gi < 0 || gi >= len(a.Goroutines) {
		return
	}
	gr := &a.Goroutines[gi]
	h.Goroutine = gr.ID
	h.Status = gr.Status.String()
	if gr.WaitReason != "" {
		h.Status = gr.WaitReason
	}
	if a.Binary != nil {
		if f, ok := a.Binary.CallSite(gr.GoPC); ok {
			h.CreatedBy = &Site{Function: f.Name, File: f.File, Line: f.Line}
		}
	}
}

// callSite returns the source position of a frame's PC (a return address).
func (a *Analysis) callSite(fn string, pc uint64) *Site {
	if a.Binary == nil {
		return nil
	}
	f, ok := a.Binary.CallSite(pc)
	if !ok {
		return nil
	}
	return &Site{Function: fn, File: f.File, Line: f.Line}
}

// funcSite names the function at code pointer pc (a closure's or a
// finalizer's entry) with its source position.
func (a *Analysis) funcSite(pc uint64) *Site {
	if a.Binary == nil || pc == 0 {
		return nil
	}
	f, ok := a.Binary.Func(pc)
	if !ok || f.Entry != pc {
		return nil
	}
	return &Site{Function: f.Name, File: f.File, Line: f.Line}
}

// classify recognizes holders that the runtime's own structures stand for
// and rewrites h to name them: a goroutine whose runtime.g is on the path
// (its pprof labels, reached from runtime.allgs or its own stack), and a
// timer in a P's timer heap (runtime.allp -> P -> timers -> timer ->
// closure), named by its closure and its creator. It returns the steps from
// the g or the timer on.
func (a *Analysis) classify(h *Holder, steps []typedStep) ([]typedStep, bool) {
	for i, s := range steps {
		gi, ok := a.goroutineAt(a.ObjectAddr(s.node))
		if !ok {
			continue
		}
		*h = Holder{
			Kind:          KindGoroutine,
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
		if s.closure == nil || i == 0 || !a.isTimer(h, steps[:i]) {
			continue
		}
		timer := steps[i-1]
		*h = Holder{
			Kind:          KindTimer,
			Function:      s.closure.Function,
			Location:      s.closure,
			Detail:        "a timer in the runtime's timer heap",
			RetainedBytes: timer.RetainedBytes,
			Objects:       timer.Objects,
		}
		if b, ok := a.AllocSite(timer.node); ok {
			stack := make([]Site, len(b.Stack))
			for k, f := range b.Stack {
				stack[k] = Site{Function: f.Func, File: f.File, Line: int(f.Line)}
			}
			h.Creator = firstSite(stack, isTimerMachinery)
		}
		steps[i-1].Via = ""
		if steps[i-1].Type == "" {
			steps[i-1].Type = "runtime timer"
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
	switch typeName(last.t) {
	case "runtime.timer", "runtime.timeTimer", "time.Timer":
		return true
	}
	for _, s := range steps {
		if strings.Contains(s.Via, "timers.heap") {
			return true
		}
	}
	return h.Kind == KindGlobal && h.Global == "runtime.allp"
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

// goroutineAt returns the goroutine whose runtime.g is at addr.
func (a *Analysis) goroutineAt(addr uint64) (int, bool) {
	if a.gByAddr == nil {
		a.gByAddr = make(map[uint64]int, len(a.Goroutines))
		for i, g := range a.Goroutines {
			a.gByAddr[g.Addr] = i
		}
	}
	i, ok := a.gByAddr[addr]
	return i, ok
}

// word reads the pointer-sized word at off of b in the dump's byte order,
// or 0 when it is out of range or the dump gave no pointer size.
func (a *Analysis) word(b []byte, off int64) uint64 {
	ps := int64(a.params.ptrSize)
	if ps == 0 || off < 0 || off+ps > int64(len(b)) {
		return 0
	}
	return a.params.word(b[off:])
}

// typeName is the name a report gives t, "" for nil.
func typeName(t *binsym.Type) string {
	if t == nil {
		return ""
	}
	return t.Name
}
