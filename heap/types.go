package heap

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

// typedStep is a Step with what typing it found out.
type typedStep struct {
	Step
	node heapdump.NodeID
	// t is the type of the memory from base on in the object (base is
	// not 0 for an interior pointer or after a malloc header), nil when
	// unknown.
	t    *binsym.Type
	base int64
	// mapType is set on a map's runtime object: the map type it belongs to.
	mapType *binsym.Type
	// closure names the function of a func value object.
	closure *binsym.Position
}

// typer types the objects along a path. Objects carry no type in a dump;
// types come from the executable, in this order of preference:
//   - the malloc header: since Go 1.22, an object of 512 bytes to 32 KiB
//     that holds pointers starts with its type descriptor;
//   - the static type of the field that points to the object, once the
//     container's type is known (a pointer's element, a slice's backing
//     array, a map's runtime object and its groups);
//   - the dynamic type an interface's first word (itab or type) gives the
//     object its data word points to;
//   - a closure's code pointer, which names its function.
type typer struct {
	a *Analysis
	// memo keeps the typed objects of the paths of one search from a root
	// (see newSearch), with their records: those paths follow one search
	// tree, so a step that is on several of them is the same on all.
	memo map[heapdump.NodeID]memoStep
	// finCycle says of finalizer objects whether they reach themselves
	// (reachesItself), once asked.
	finCycle map[heapdump.NodeID]bool
	// finBudget is what is left of the nodes those searches may visit,
	// 0 until the first, negative once spent.
	finBudget int
	finSeen   []uint64 // their bitmap of objects seen, clear between them
	// args and containing keep what binsym.ArgsType and
	// binsym.ContainingType returned (interior.go), by their arguments.
	args       map[uint64]*binsym.Type
	containing map[string]*binsym.Type
	// shapes keeps the instances of generic types instance made up from
	// their shapes, by name (nil when there is none).
	shapes map[string]*binsym.Type
	// otherBudget is what is left of the root slots fromOtherFrames may
	// read, 0 until its first call, negative once spent.
	otherBudget int
	// pointers index the pointer fields of objects with many, by the
	// address of the object (pointerIndex); indexed counts their entries.
	pointers map[uint64][]pointerTarget
	indexed  int
	// records reads the records of the objects on paths, built on first
	// use: the objects of one group's paths are often near each other.
	records *heapdump.RecordReader
}

// record returns the record of object v (heapdump.Graph.ObjectRecord):
// every record the typer reads goes through records.
func (t *typer) record(v heapdump.NodeID, limit int) (*heapdump.ObjectRecord, error) {
	if t.records == nil {
		t.records = t.a.g.RecordReader()
	}
	return t.records.ObjectRecord(v, limit)
}

// memoStep is a typed object on a path and its record, whole.
type memoStep struct {
	s   typedStep
	rec *heapdump.ObjectRecord
}

// newSearch forgets the steps of the paths of the previous search.
func (t *typer) newSearch() { clear(t.memo) }

// Limits of the objects that carry a malloc header (runtime/mbitmap.go:
// heapBitsInSpan and maxSmallSize).
const (
	minHeaderObject = 512 + 1
	maxHeaderObject = 32 << 10
	mallocHeader    = 8
	// recordContents is the number of bytes of an object's contents
	// a typed step keeps; the words past them are read from the file.
	recordContents = 64 << 10
)

// steps types the objects of path p, which starts at a root node and
// belongs to the search tree of the current search (see newSearch).
func (t *typer) steps(p []heapdump.NodeID) ([]typedStep, error) {
	return t.walk(p, nil, nil)
}

// limitedSteps types path p as steps does when it has at most most objects;
// a longer one gets its first and last objects typed, the last quarter of
// max of them, and one step in between that stands for those left out: it
// counts them, and has the type and field of the step before it, which a
// long path repeats (a linked list's node and next field). The last
// objects are typed as pointed to by an object of that type.
func (t *typer) limitedSteps(p []heapdump.NodeID, most int) ([]typedStep, error) {
	return t.limitedWalk(p, most, nil, nil)
}

// limitedWalk is limitedSteps for a path that starts at an object, as walk
// is for steps.
func (t *typer) limitedWalk(p []heapdump.NodeID, most int, prev *heapdump.ObjectRecord, prevStep *typedStep) ([]typedStep, error) {
	n := len(p) - 1
	if most <= 0 || n <= most {
		return t.walk(p, prev, prevStep)
	}
	tail := max(1, most/4)
	head := most - tail
	steps, err := t.walk(p[:head+1], prev, prevStep)
	if err != nil {
		return nil, err
	}
	last := steps[len(steps)-1]
	gap := typedStep{node: heapdump.NoNode, t: last.t, base: last.base, mapType: last.mapType,
		Step: Step{Via: last.Via, Type: last.Type, Omitted: n - head - tail}}
	from := p[len(p)-tail-1] // the last object left out
	rec, err := t.record(from, 0)
	if err != nil {
		return nil, err
	}
	rest, err := t.walk(p[len(p)-tail-1:], rec, &gap)
	if err != nil {
		return nil, err
	}
	return append(append(steps, gap), rest...), nil
}

// walk types the objects of path p after the first: p[0] is a root node
// when prev is nil, else the object of record prev, typed as prevStep.
func (t *typer) walk(p []heapdump.NodeID, prev *heapdump.ObjectRecord, prevStep *typedStep) ([]typedStep, error) {
	a := t.a
	steps := make([]typedStep, 0, len(p)-1)
	for i := 1; i < len(p); i++ {
		v := p[i]
		if m, ok := t.memo[v]; ok {
			steps = append(steps, m.s)
			prev = m.rec
			continue
		}
		last := i == len(p)-1
		limit := recordContents // words past it are read with rec.Word
		if last {
			limit = 64 // the last object: only its first words are needed
		}
		rec, err := t.record(v, limit)
		if err != nil {
			return nil, err
		}
		s := typedStep{node: v, Step: Step{
			Addr:          fmt.Sprintf("%#x", rec.Addr),
			Size:          rec.Size,
			RetainedBytes: a.retained[v],
			Objects:       a.RetainedObjects(v),
		}}
		var tt target
		switch {
		case i == 1 && prevStep == nil:
			tt, err = t.fromRoot(p[0], v, rec)
			if err != nil {
				return nil, err
			}
		case i == 1:
			tt = t.fromObject(prev, prevStep, rec)
		default:
			tt = t.fromObject(prev, &steps[len(steps)-1], rec)
		}
		s.Via, s.t, s.base, s.mapType, s.Type = tt.via, tt.t, tt.base, tt.mapType, tt.name
		if ht, ok := t.header(rec); ok {
			s.t, s.base, s.Type = ht, mallocHeader, ht.Name
			if el := ht; ht.Size > 0 && int64(rec.Size)-mallocHeader >= 2*ht.Size {
				s.t = binsym.ArrayOf(el, (int64(rec.Size)-mallocHeader)/el.Size)
				s.Type = "[]" + el.Name
			}
		} else if s.base > 0 && s.mapType == nil {
			t.interior(&s, rec)
		}
		if _, ok := a.gObject(v); ok && a.Binary != nil {
			if gt := a.Binary.TypeByName("runtime.g"); gt != nil {
				s.t, s.base, s.Type = gt, 0, gt.Name
			}
		}
		if code := a.g.Word(rec.Contents, 0); code != 0 {
			if site := a.funcSite(code); site != nil {
				s.closure = site
				s.t, s.base = a.Binary.ClosureType(code), 0
				s.Type = "closure " + site.Function
			}
		}
		s.Key = tt.key
		if k := t.entryKey(s.t, rec); k != "" {
			s.Key = k
		}
		steps = append(steps, s)
		if !last {
			if t.memo == nil {
				t.memo = map[heapdump.NodeID]memoStep{}
			}
			t.memo[v] = memoStep{s, rec}
		}
		prev = rec
	}
	t.inferBack(steps)
	return steps, nil
}

// header returns the type in the malloc header of rec, if it has one.
func (t *typer) header(rec *heapdump.ObjectRecord) (*binsym.Type, bool) {
	a := t.a
	if a.Binary == nil || rec.Size < minHeaderObject || rec.Size > maxHeaderObject || len(rec.PtrOffsets) == 0 {
		return nil, false
	}
	ty := a.Binary.TypeAt(a.g.Word(rec.Contents, 0))
	if ty == nil || ty.Size <= 0 || ty.Size > int64(rec.Size)-mallocHeader {
		return nil, false
	}
	return ty, true
}

// target is what typing found out about an object from what points to it.
type target struct {
	// key is the integer key of the map slot the pointer is the value of.
	key     string
	via     string
	t       *binsym.Type
	base    int64
	name    string
	mapType *binsym.Type
}

// fromObject types rec, which the object prev (typed by ps) points to.
func (t *typer) fromObject(prev *heapdump.ObjectRecord, ps *typedStep, rec *heapdump.ObjectRecord) target {
	if off, w, ok := t.firstPointer(prev, rec); ok {
		o := int64(off)
		c := container{
			t:       ps.t,
			off:     o - ps.base,
			mapType: ps.mapType,
			word:    func(d int64) uint64 { return prev.Word(o + d) },
			isPtr: func(d int64) bool {
				_, found := slices.BinarySearch(prev.PtrOffsets, uint64(o+d))
				return found
			},
		}
		if c.off < 0 {
			// Before the part of the object its type describes (a
			// pointer into its middle): an offset from its start.
			c.t, c.off, c.mapType = nil, o, nil
		}
		tt := t.target(c, rec, int64(w-rec.Addr))
		return tt
	}
	return target{}
}

// fromRoot types rec, which root node r points to.
func (t *typer) fromRoot(r, v heapdump.NodeID, rec *heapdump.ObjectRecord) (target, error) {
	a := t.a
	root := a.g.Root(r)
	succ := a.g.Succ(r)
	k := slices.Index(succ, v)
	if k < 0 {
		return target{}, nil
	}
	slot := a.g.RootSlots(r)[k]
	interior := int64(slot.Value - rec.Addr)
	switch {
	case slot.Frame >= 0:
		o := int64(slot.Offset)
		c := container{
			off:  o,
			word: func(d int64) uint64 { return a.g.FrameWord(slot.Frame, o+d) },
			isPtr: func(d int64) bool {
				return slices.ContainsFunc(a.d.FrameSlots(slot.Frame), func(s heapdump.Slot) bool { return int64(s.Offset) == o+d })
			},
		}
		if slot.InStackObject() {
			return t.fromStackObject(c, root, slot, rec, interior), nil
		}
		unsure := root.Kind == heapdump.RootFrame && root.Unsure && root.Frame > 0
		arg := !unsure && slot.Frame != root.Frame
		if arg {
			c.t, c.off = t.argsType(root, o)
		}
		if !unsure && !arg {
			if tt, ok := t.frameVar(c, slot, rec, interior); ok {
				return tt, nil
			}
		}
		tt := t.target(c, rec, interior)
		switch {
		case unsure:
			tt.via = "local or argument"
		case arg:
			tt.via = "argument"
		default:
			tt.via = "local"
		}
		if tt.t == nil {
			tt.via += fmt.Sprintf(" at +%d", o)
			if other, ok := t.fromOtherFrames(r, rec); ok {
				// A compiler's temporary: the type of a named variable
				// of another frame that points to the same object.
				other.via = tt.via
				return other, nil
			}
			if near, ok := t.fromGoroutineFields(r, rec); ok {
				// Or of a field of what a variable of its goroutine
				// points to (a handler's r.URL).
				near.via = tt.via
				return near, nil
			}
		}
		return tt, nil
	case root.Kind == heapdump.RootGlobal:
		seg := a.segmentAt(slot.Addr)
		if seg == nil {
			return target{}, nil
		}
		o := int64(slot.Addr - seg.Addr)
		c := container{
			off:  int64(slot.Addr - root.Addr),
			word: func(d int64) uint64 { return seg.Contents.Word(o + d) },
			isPtr: func(d int64) bool {
				_, found := slices.BinarySearch(seg.PtrOffsets, uint64(o+d))
				return found
			},
		}
		if st, ok := a.staticOf(root); ok {
			c.t = a.Binary.StaticType(st)
		} else if name := a.g.RootName(root); a.Binary != nil && name != "" {
			c.t = a.Binary.GlobalType(name)
			if c.t == nil {
				c.t = a.givenGlobalType(root)
			}
		}
		tt := t.target(c, rec, interior)
		if tt.via == "" && c.t != nil {
			tt.via = "(the variable)"
		}
		return tt, nil
	case slot.Field == heapdump.FieldRecord && a.Binary != nil:
		ty := a.Binary.TypeByName("runtime._defer")
		return target{via: slot.Field.String(), t: ty, name: typeName(ty)}, nil
	case slot.Field == heapdump.FieldValue && root.Kind == heapdump.RootPanic && root.Index >= 0 && root.Index < len(a.d.Panics):
		ty := t.dynamic(a.d.Panics[root.Index].Type)
		return target{via: slot.Field.String(), t: ty, name: typeName(ty)}, nil
	case (root.Kind == heapdump.RootFinalizer || root.Kind == heapdump.RootQueuedFinalizer) && slot.Field == heapdump.FieldObject:
		return t.finalizerTarget(root, rec, interior), nil
	default:
		return target{via: slot.Field.String()}, nil
	}
}

// frameVar types rec, which the slot of a frame's own memory points to,
// from the variable DWARF puts in that slot at the frame's PC: "local
// slotTarget types the object rec that a slot of frame root points to:
// through the callee's argument types when the slot is an argument in the
// caller's frame (none for a root unsure of its callee), else through the
// frame's variables. A zero target says it could not.
func (t *typer) slotTarget(root *heapdump.Root, slot heapdump.RootSlot, rec *heapdump.ObjectRecord) target {
	a := t.a
	o := int64(slot.Offset)
	c := container{
		off:   o,
		word:  func(d int64) uint64 { return a.g.FrameWord(slot.Frame, o+d) },
		isPtr: func(d int64) bool { return d == 0 },
	}
	if slot.Frame != root.Frame {
		if root.Unsure {
			return target{}
		}
		c.t, c.off = t.argsType(root, o)
		return t.target(c, rec, 0)
	}
	if tt, ok := t.frameVar(c, slot, rec, 0); ok {
		return tt
	}
	return target{}
}

// conn", "argument pc" (spilled to the frame), "local ctx.data".
func (t *typer) frameVar(c container, slot heapdump.RootSlot, rec *heapdump.ObjectRecord, interior int64) (target, bool) {
	a := t.a
	if a.Binary == nil || slot.Frame < 0 || slot.Frame >= len(a.d.Frames) {
		return target{}, false
	}
	f := &a.d.Frames[slot.Frame]
	v, in, ok := a.Binary.FrameVar(f.Entry, f.PC, int64(slot.Offset)-int64(f.Size))
	if !ok {
		return target{}, false
	}
	c.t, c.off = v.Type, in
	// The words around the slot are those of the variable's pieces, which
	// may lie apart: an interface's type word in another slot, or in a
	// register (then unknown).
	frameOff := func(d int64) (int64, bool) {
		x := in + d
		for _, p := range v.Pieces {
			if p.Offset <= x && x < p.Offset+p.Size {
				return p.CFAOff + x - p.Offset + int64(f.Size), p.OnStack
			}
		}
		return 0, false
	}
	c.word = func(d int64) uint64 {
		if o, ok := frameOff(d); ok {
			return a.g.FrameWord(slot.Frame, o)
		}
		return 0
	}
	c.isPtr = func(d int64) bool {
		o, ok := frameOff(d)
		return ok && slices.ContainsFunc(a.d.FrameSlots(slot.Frame), func(s heapdump.Slot) bool { return int64(s.Offset) == o })
	}
	tt := t.target(c, rec, interior)
	path := tt.via
	if v.Type == nil && in != 0 {
		path = fmt.Sprintf("+%d", in)
	}
	kind := "local"
	if v.Param {
		kind = "argument"
	}
	tt.via = fmt.Sprintf("%s %s%s", kind, v.Name, path)
	return tt, true
}

// maxOtherSlots bounds the slots fromOtherFrames types for one object,
// and maxOtherBudget the root slots its calls read in all, for one
// analysis: each call reads every frame's slots, and a report types a few
// paths.
const (
	maxOtherSlots  = 64
	maxOtherBudget = 1 << 24
)

// fromOtherFrames types rec from the frame slots of roots other than r
// that point to its start and that DWARF names or that are arguments, the
// largest type that fits rec: a compiler's temporary (which DWARF does not
// name) often holds what another goroutine's variable does, a connection
// its reading and writing goroutines share. It reads the root slots, not
// the graph's edges.
func (t *typer) fromOtherFrames(r heapdump.NodeID, rec *heapdump.ObjectRecord) (target, bool) {
	a := t.a
	if a.Binary == nil {
		return target{}, false
	}
	if t.otherBudget == 0 {
		t.otherBudget = maxOtherBudget
	}
	var best target
	tried := 0
	first := heapdump.NodeID(a.g.NumObjects())
	for v := first; int(v-first) < a.g.NumRoots() && tried < maxOtherSlots && t.otherBudget > 0; v++ {
		root := a.g.Root(v)
		if v == r || root == nil || root.Kind != heapdump.RootFrame {
			continue
		}
		slots := a.g.RootSlots(v)
		t.otherBudget -= 1 + len(slots)
		for _, slot := range slots {
			if slot.Value != rec.Addr || slot.Frame < 0 || slot.Frame >= len(a.d.Frames) || slot.InStackObject() {
				continue
			}
			tried++
			if tt := t.slotTarget(root, slot, rec); tt.t != nil && tt.t.Size <= int64(rec.Size) && (best.t == nil || tt.t.Size > best.t.Size) {
				best = tt
			}
		}
	}
	if t.otherBudget <= 0 {
		t.otherBudget = -1 // spent: 0 would start it again
	}
	return best, best.t != nil
}

// maxNeighbourObjects bounds the objects fromGoroutineFields reads, and
// maxNeighbourDepth how many fields deep it looks from a variable.
const (
	maxNeighbourObjects = 64
	maxNeighbourDepth   = 2
)

// fromGoroutineFields types rec from a field of an object that a typed
// variable or argument of the same goroutine as frame root r points to, or
// of an object such a field points to (a handler's response's request's
// URL): the field that holds rec's address. It reads the root slots, within
// the budget of fromOtherFrames, and at most maxNeighbourObjects objects.
func (t *typer) fromGoroutineFields(r heapdump.NodeID, rec *heapdump.ObjectRecord) (target, bool) {
	a := t.a
	own := a.g.Root(r)
	if a.Binary == nil || own == nil || own.Goroutine < 0 || t.otherBudget < 0 {
		return target{}, false
	}
	if t.otherBudget == 0 {
		t.otherBudget = maxOtherBudget
	}
	defer func() {
		if t.otherBudget <= 0 {
			t.otherBudget = -1 // spent: 0 would start it again
		}
	}()
	// The typed objects the goroutine's variables point to.
	type typedObj struct {
		rec   *heapdump.ObjectRecord
		t     *binsym.Type
		depth int
	}
	var queue []typedObj
	read := 0
	load := func(addr uint64) *heapdump.ObjectRecord {
		if read >= maxNeighbourObjects {
			return nil
		}
		x, ok := a.g.Find(addr)
		if !ok {
			return nil
		}
		xrec, err := t.record(x, 4096)
		if err != nil || xrec.Addr != addr {
			return nil
		}
		read++
		return xrec
	}
	first := heapdump.NodeID(a.g.NumObjects())
	for v := first; int(v-first) < a.g.NumRoots() && read < maxNeighbourObjects && t.otherBudget > 0; v++ {
		root := a.g.Root(v)
		if root == nil || root.Kind != heapdump.RootFrame || root.Goroutine != own.Goroutine {
			continue
		}
		slots := a.g.RootSlots(v)
		t.otherBudget -= 1 + len(slots)
		for _, slot := range slots {
			if slot.Value == rec.Addr || slot.Frame < 0 || slot.Frame >= len(a.d.Frames) || slot.InStackObject() {
				continue
			}
			xrec := load(slot.Value)
			if xrec == nil {
				continue
			}
			if xt := t.slotTarget(root, slot, xrec); xt.t != nil && xt.base == 0 {
				queue = append(queue, typedObj{xrec, xt.t, 1})
			}
		}
	}
	ps := int64(a.d.Params.PtrSize)
	for head := 0; head < len(queue); head++ {
		x := queue[head]
		for _, off := range x.rec.PtrOffsets {
			if int64(off) >= x.t.Size {
				break
			}
			w := x.rec.Word(int64(off))
			_, ft, ifaceData := x.t.PointerAt(int64(off))
			var ty *binsym.Type
			switch {
			case ft == nil:
			case ifaceData:
				ty = t.dynamic(x.rec.Word(int64(off) - ps))
			default:
				ty = ft.Pointee()
			}
			if ty == nil || ty.Size <= 0 {
				continue
			}
			if w == rec.Addr && ty.Size <= int64(rec.Size) {
				return target{t: ty, name: ty.Name}, true
			}
			if x.depth < maxNeighbourDepth && ty.Kind == reflect.Struct {
				if next := load(w); next != nil {
					queue = append(queue, typedObj{next, ty, x.depth + 1})
				}
			}
		}
	}
	return target{}, false
}

// finalizerTarget types the object of a finalizer or queued finalizer
// root: the finalizer record gives the pointer type of the object.
func (t *typer) finalizerTarget(root *heapdump.Root, rec *heapdump.ObjectRecord, interior int64) target {
	tt := target{via: "object", base: interior}
	a := t.a
	fin := a.d.Finalizers
	if root.Kind == heapdump.RootQueuedFinalizer {
		fin = a.d.QueuedFinalizers
	}
	if a.Binary == nil || root.Index < 0 || root.Index >= len(fin) {
		return tt
	}
	pt := a.Binary.TypeAt(fin[root.Index].ObjType)
	if pt == nil {
		return tt
	}
	ot := pt.Pointee()
	if ot == nil || ot.Size <= 0 || ot.Size > int64(rec.Size)-interior {
		return tt
	}
	tt.t, tt.name = ot, ot.Name
	return tt
}

// container is the memory a pointer is found in: its type t (nil when
// unknown) and the pointer's offset off in it, a map's type when it is a
// map's runtime object, and readers of the words around the pointer:
// word(d) is the word d bytes from it, isPtr(d) says whether that word is
// a pointer slot.
type container struct {
	t       *binsym.Type
	off     int64
	mapType *binsym.Type
	word    func(d int64) uint64
	isPtr   func(d int64) bool
}

// target types rec, which the pointer of c points into, interior bytes
// from its start.
func (t *typer) target(c container, rec *heapdump.ObjectRecord, interior int64) target {
	a := t.a
	ps := int64(a.d.Params.PtrSize)
	tt := target{base: interior}
	typed := false // the pointer is a known field of c.t
	if c.t != nil {
		path, ft, ifaceData := c.t.PointerAt(c.off)
		tt.via = path
		typed = ft != nil
		if ct, ok := t.containerTarget(c, rec, tt); ok {
			return ct
		}
		if ft != nil && (c.mapType != nil || strings.Contains(c.t.Name, "map.group[")) {
			tt.key = t.mapKey(c)
		}
		switch {
		case ft == nil:
		case c.mapType != nil && path == ".dirPtr":
			return t.mapData(c, rec, tt)
		case c.mapType != nil && strings.HasSuffix(path, ".groups.data"):
			if g := swissGroup(c.mapType, 1); g != nil {
				tt.t = binsym.ArrayOf(g, int64(rec.Size)/g.Size)
			}
			tt.name = typeName(c.mapType) + " groups"
			return tt
		case ifaceData:
			tt.t = t.dynamic(c.word(-ps))
		case ft.Kind == reflect.Slice && ft.Elem != nil:
			tt.t = t.backing(ft.Elem, rec, interior)
			tt.name = "[]" + ft.Elem.Name
			return tt
		case ft.Kind == reflect.String:
			tt.name = "string"
			return tt
		case ft.Kind == reflect.Map:
			tt.mapType = ft
			tt.t = ft.Header
			tt.name = typeName(ft)
			return tt
		case c.mapType != nil && (path == ".buckets" || path == ".oldbuckets") && ft.Pointee() != nil && ft.Pointee().Size > 0:
			// A map before Go 1.24: its array of buckets.
			b := ft.Pointee()
			tt.t = binsym.ArrayOf(b, int64(rec.Size)/b.Size)
			tt.mapType = c.mapType
			tt.name = typeName(c.mapType) + " buckets"
			return tt
		default:
			tt.t = ft.Pointee()
			if tt.t == nil {
				tt.t = knownPointee(c.t, path, a.Binary)
			}
			if c.mapType != nil && strings.HasSuffix(path, ".overflow") {
				tt.mapType = c.mapType // a bucket's overflow bucket
				tt.name = typeName(c.mapType) + " bucket"
				return tt
			}
			if c.mapType != nil && !isGroup(c.t) && !isBuckets(c.t) {
				tt.mapType = c.mapType // from a map's directory to a table
				tt.name = typeName(c.mapType) + " table"
				return tt
			}
		}
	}
	// An interface's first word (itab or type) is never a pointer slot: a
	// word before the pointer that is not one, and names a type, makes
	// the pointer an interface's data word.
	if tt.t == nil && ps > 0 && c.off >= ps && !c.isPtr(-ps) {
		tt.t = t.dynamic(c.word(-ps))
	}
	if tt.via == "" && c.off != 0 && !typed {
		tt.via = fmt.Sprintf("+%d", c.off)
	}
	tt.name = typeName(tt.t)
	return tt
}

// knownPointee types what some of the runtime's untyped pointer fields
// point to.
func knownPointee(container *binsym.Type, path string, bin *binsym.Binary) *binsym.Type {
	if container == nil || bin == nil {
		return nil
	}
	switch {
	case container.Name == "runtime.g" && path == ".labels":
		return bin.TypeByName("runtime/pprof.labelMap")
	}
	return nil
}

// backing returns the type of a slice's backing array object rec, whose
// elements of type elem start at byte from.
func (t *typer) backing(elem *binsym.Type, rec *heapdump.ObjectRecord, from int64) *binsym.Type {
	if elem.Size <= 0 {
		return nil
	}
	return binsym.ArrayOf(elem, (int64(rec.Size)-from)/elem.Size)
}

// mapData types what a (swiss) map's dirPtr points to: its only group when
// the map is small (dirLen is 0), else its directory of tables.
func (t *typer) mapData(c container, rec *heapdump.ObjectRecord, tt target) target {
	mt := c.mapType
	name := typeName(mt)
	dirLen := int64(c.word(int64(t.a.d.Params.PtrSize)))
	if dirLen != 0 {
		tt.name = name + " directory"
		tt.mapType = mt
		if tab := t.a.Binary.TypeByName("internal/runtime/maps.table"); tab != nil {
			ptr := &binsym.Type{Name: "*" + tab.Name, Kind: reflect.Pointer, Size: 8, Elem: tab}
			tt.t = binsym.ArrayOf(ptr, int64(rec.Size)/8)
		}
		return tt
	}
	tt.name = name + " group"
	tt.t = swissGroup(mt, 1)
	return tt
}

// swissGroup builds the layout of n groups of a swiss map of type mt (Go
// 1.24 and later): a control word, then 8 slots of key and element. It
// returns nil when the layout cannot be told.
func swissGroup(mt *binsym.Type, n int64) *binsym.Type {
	if mt == nil || mt.Key == nil || mt.Elem == nil {
		return nil
	}
	k, e := slotPart(mt.Key), slotPart(mt.Elem)
	ka, ea := k.Align(), e.Align()
	elemOff := roundUp(k.Size, ea)
	slotAlign := max(ka, ea)
	slotSize := roundUp(elemOff+e.Size, slotAlign)
	slot := &binsym.Type{
		Name:   "slot",
		Kind:   reflect.Struct,
		Size:   slotSize,
		Fields: []binsym.Field{{Name: "key", Offset: 0, Type: k}, {Name: "elem", Offset: elemOff, Type: e}},
	}
	slots := binsym.ArrayOf(slot, 8)
	ctrl := &binsym.Type{Name: "uint64", Kind: reflect.Uint64, Size: 8}
	group := &binsym.Type{
		Name:   "group",
		Kind:   reflect.Struct,
		Size:   8 + slots.Size,
		Fields: []binsym.Field{{Name: "ctrl", Type: ctrl}, {Name: "slots", Offset: 8, Type: slots}},
	}
	if n == 1 {
		return group
	}
	return binsym.ArrayOf(group, n)
}

// isBuckets reports whether t is a map's array of buckets (before Go 1.24),
// as target types it.
func isBuckets(t *binsym.Type) bool {
	return t != nil && t.Kind == reflect.Array && t.Elem != nil && (strings.HasPrefix(t.Elem.Name, "bucket<") || t.Elem.Kind == reflect.Struct && fieldNamed(t.Elem, "keys") != nil)
}

// isGroup reports whether t is the layout swissGroup builds.
func isGroup(t *binsym.Type) bool {
	return t != nil && (t.Name == "group" || (t.Kind == reflect.Array && t.Elem != nil && t.Elem.Name == "group"))
}

// slotPart is the type a map slot stores for a key or element of type t:
// t itself, or a pointer to it when it is over 128 bytes.
func slotPart(t *binsym.Type) *binsym.Type {
	if t.Size > 128 {
		return &binsym.Type{Name: "*" + t.Name, Kind: reflect.Pointer, Size: 8, Elem: t}
	}
	return t
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

// dynamic returns the type of the object an interface's data word points
// to, given the interface's first word w: an itab (of a non-empty
// interface) or a type descriptor (of an empty one). It returns nil when w
// names neither, or there is no executable to read types from.
func (t *typer) dynamic(w uint64) *binsym.Type {
	a := t.a
	if w == 0 || a.Binary == nil {
		return nil
	}
	typeAddr := w
	if ta, ok := a.d.Itabs[w]; ok {
		typeAddr = ta
	} else if ta, ok := a.Binary.ItabType(w); ok {
		typeAddr = ta
	}
	dyn := a.Binary.TypeAt(typeAddr)
	if dyn == nil {
		return nil
	}
	return dyn.IfacePointee()
}

// givenGlobalType returns the type that the Globals option gives the
// global variable of root, for an executable without DWARF (GlobalType
// needs it), or nil: none given, or one whose size is not the variable's.
func (a *Analysis) givenGlobalType(root *heapdump.Root) *binsym.Type {
	s, ok := a.opts.globalAt(root.Addr)
	if !ok || s.Type == 0 || s.Name != a.g.RootName(root) || s.Addr != root.Addr {
		return nil
	}
	t := a.Binary.TypeAt(s.Type)
	if t == nil || t.Size <= 0 || uint64(t.Size) != s.Size {
		return nil
	}
	return t
}

// segmentAt returns the data or bss segment that holds addr.
func (a *Analysis) segmentAt(addr uint64) *heapdump.Segment {
	for i := range a.d.Segments {
		s := &a.d.Segments[i]
		if addr >= s.Addr && addr < s.Addr+s.Size {
			return s
		}
	}
	return nil
}

// isRuntimeGlobal reports whether a holder is one of the runtime's own
// globals (runtime.allp, runtime.m0...), which reach much of the heap for
// reasons of no interest to a report.
func isRuntimeGlobal(h Holder) bool {
	return h.Kind == heapdump.RootGlobal && strings.HasPrefix(h.Global, "runtime.")
}

// typeName is the name a report gives t, "" for nil.
func typeName(t *binsym.Type) string {
	if t == nil {
		return ""
	}
	return t.Name
}
