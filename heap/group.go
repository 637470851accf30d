package heap

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/recent"
)

// Holdings are grouped before any threshold applies: 10,000 goroutines
// that each hold 4 KiB are one group of 39 MiB, not 10,000 holdings under
// the threshold. A holding is an object whose immediate dominator is a
// holder: a root node, a goroutine's runtime.g, or the super-root (several
// roots share it). Its key says how it is held without reading the dump
// again: the holder's signature (root kind, function and creation site, or
// global) and the slot the object is held in; for a holding several roots
// share, the set of the signatures of all the holders that reach it and
// its size (see shares). Only the first member of each group that is
// reported gets a typed path.

// pending is a group of holdings, or of large objects, before it is
// described: what the report needs to order, threshold and describe it.
type pending struct {
	key holdKey
	// rep is the first member: the group is described by its path.
	rep heapdump.NodeID
	// count members, bytes the part of what they retain that counts
	// towards MinSize (what large objects inside them retain is theirs),
	// retained and objects all that they retain; minEach and maxEach the
	// least and most one of them retains.
	count             int
	nested            int   // members inside another member, counted once (nest)
	id                int32 // the index of the group among all (nesting.groups)
	bytes             uint64
	retained, objects uint64
	minEach, maxEach  uint64
	goroutines        []uint64
	large             bool
	described         *held // set for groups described to be keyed
	// minSize is the report's MinSize: members of a holding group are
	// smaller (nearestMembers).
	minSize uint64
	// mech is set on a group the defers and timers of its members were
	// folded into (joinMechanisms), and into on each group folded so.
	mech *Mechanism
	into *pending
	// timerOwn adds up the timers' own sizes of a group of timers' holdings
	// keyed with a shared holding's key: folded, they count too.
	timerOwn uint64
	// members are the members, when the analysis records them
	// (recordMembers).
	members []heapdump.NodeID
	// leakedBytes is what the members held by goroutines of a.leaked
	// retain, and leak the group's mark (markLeaked).
	leakedBytes uint64
	leak        *GroupLeak
}

// add counts member v, which retains r bytes and counts for b of them.
func (p *pending) add(a *Analysis, v heapdump.NodeID, b uint64, gid uint64, hasG bool) {
	r := a.retained[v]
	if p.count == 0 {
		p.rep, p.minEach, p.maxEach = v, r, r
	}
	p.count++
	p.bytes += b
	p.retained += r
	p.objects += a.RetainedObjects(v)
	p.minEach, p.maxEach = min(p.minEach, r), max(p.maxEach, r)
	if hasG {
		p.goroutines = append(p.goroutines, gid)
		if _, ok := a.leaked[gid]; ok {
			p.leakedBytes += r
		}
	}
	if a.recordMembers {
		p.members = append(p.members, v)
	}
}

// holdingTops returns, for every node, the top object of the holding it is
// in: the object just below its holder on its dominator chain. For a
// holding the super-root holds (shared), it is instead the first root node
// that reaches it: the one whose depth-first search from the super-root,
// which numbered the nodes for the dominator tree, found it. A node's
// holding is itself for other holdings, and NoNode for root nodes and what
// no root reaches. One pass in that preorder computes it, in which every
// node comes after its immediate dominator, and the nodes each root's
// search found come after the root and before the next root; the analysis
// keeps it for later reports. Use topOf and firstRoot to read it.
func (a *Analysis) holdingTops() []heapdump.NodeID {
	if a.tops != nil {
		return a.tops
	}
	var tops []heapdump.NodeID
	if a.topsAhead != nil {
		tops = <-a.topsAhead
		a.topsAhead = nil
	} else {
		tops = newTops(a.g.NumNodes())
	}
	sr := a.g.SuperRoot()
	cur := sr
	// The immediate dominators by preorder position, while the tree has
	// them: read in order, where a.Idom(v) would look up every node.
	order, idoms := a.tree.Preorder(), a.tree.PreorderIdoms()
	held := make([]uint64, (a.g.NumNodes()+63)/64)
	a.prepareConcurrent()
	gNodes, objects := a.gNodes, heapdump.NodeID(a.g.NumObjects())
	for i, u := range order {
		v := heapdump.NodeID(u)
		if !a.g.IsObject(v) {
			cur = v
			continue
		}
		var d heapdump.NodeID
		if idoms != nil {
			d = heapdump.NodeID(order[idoms[i]])
		} else {
			d = a.Idom(v)
		}
		switch {
		case d == sr:
			tops[v] = cur
		case d >= objects || gNodes[d/64]&(1<<(d%64)) != 0 || a.g.IsTimer(d): // isHolder(d), inline
			tops[v] = v
			held[v/64] |= 1 << (v % 64)
		case a.g.IsObject(tops[d]):
			tops[v] = tops[d]
		default:
			tops[v] = d // below a shared holding, whose entry is its first root
		}
	}
	a.tops, a.heldTops = tops, held
	return tops
}

// prepareTops makes the array of holdingTops on another goroutine, which
// the dominator computation, on one core for the most part, leaves idle:
// the first touch of a fresh array is the kernel clearing its pages.
func (a *Analysis) prepareTops() {
	ahead := make(chan []heapdump.NodeID, 1)
	a.topsAhead = ahead
	n := a.g.NumNodes()
	go func() { ahead <- newTops(n) }()
}

// newTops returns an array of n NoNode, the tops of holdingTops before
// its pass.
func newTops(n int) []heapdump.NodeID {
	tops := make([]heapdump.NodeID, n)
	for i := range tops {
		tops[i] = heapdump.NoNode
	}
	return tops
}

// topOf returns the top object of the holding object v is in (see
// holdingTops), NoNode for a node no root reaches or a root node.
func (a *Analysis) topOf(v heapdump.NodeID) heapdump.NodeID {
	t := a.holdingTops()[v]
	if t != heapdump.NoNode && !a.g.IsObject(t) {
		return v // a shared holding: tops records its first root
	}
	return t
}

// firstRoot returns the root node whose search first reached shared
// holding t, or NoNode when t is not one.
func (a *Analysis) firstRoot(t heapdump.NodeID) heapdump.NodeID {
	r := a.holdingTops()[t]
	if r == heapdump.NoNode || a.g.IsObject(r) {
		return heapdump.NoNode
	}
	return r
}

// isHolder reports whether node d holds the objects it immediately
// dominates: a root node, the super-root, or a goroutine's runtime.g.
func (a *Analysis) isHolder(d heapdump.NodeID) bool {
	if !a.g.IsObject(d) {
		return true
	}
	_, isG := a.gObject(d)
	return isG || a.g.IsTimer(d)
}

// holdKey says how a holding, or a large object, is held: what pending
// groups by. It is made of numbers, not text, so that keying a million
// holdings costs no more than a map lookup each.
type holdKey struct {
	kind byte // 'r' a root node, 's' shared, 'g' a goroutine's runtime.g, 'T' a timer, 't' typed
	// sig is a signature id plus one (see sigID): the root's; or for a
	// shared object the id of the set of signatures that reach it
	// (shares), never 0.
	sig uint32
	// slot is where the root holds the object: a frame slot (its frame's
	// distance from the root's frame above 32 bits, its offset below); for
	// a global, the object's size instead; field the record field of
	// other slots. For a shared object, slot is sharedSlot; for a timer's
	// holding, the code pointer of its closure (codeWord).
	slot  uint64
	field uint32 // the index of the field's name in slotFields, plus one
	gopc  uint64 // the creation site of a runtime.g holder's goroutine
	// large and nested mark a large object's key (nested: inside another
	// large object of the holding).
	large, nested bool
	typed         uint32 // a runtime-held large object's typed key, an index in Analysis.typedKeys
	// mechSig and mechSlot are the key of the shared holding a defer's or
	// a timer's holding points to (mechanismKey), 0 for none.
	mechSig  uint32
	mechSlot uint64
}

// holdingKey returns the key of holding t (an object whose immediate
// dominator is a holder), whether it counts as a user's holding (false for
// what the runtime's roots hold, see isRuntimeRoot), and the id of the
// goroutine that holds it, if one does.
func (a *Analysis) holdingKey(t heapdump.NodeID) (key holdKey, user bool, gid uint64, hasG bool) {
	d := a.Idom(t)
	switch {
	case d == a.g.SuperRoot():
		set, slot, user := a.sharedKey(t)
		if !user {
			return key, false, 0, false
		}
		return holdKey{kind: 's', sig: set, slot: slot}, true, 0, false
	case a.g.IsTimer(d):
		return holdKey{kind: 'T', slot: a.codeWord(t)}, true, 0, false
	case a.g.IsObject(d):
		gi, _ := a.gObject(d)
		gr := &a.d.Goroutines[gi]
		return holdKey{kind: 'g', gopc: gr.GoPC}, true, gr.ID, true
	}
	if a.isRuntimeRoot(d) {
		return key, false, 0, false
	}
	root := a.g.Root(d)
	key.kind, key.sig = 'r', a.sigID(d)+1
	if k := a.slotOf(d, t); k >= 0 {
		s := a.g.RootSlots(d)[k]
		switch {
		case s.Frame >= 0:
			key.slot = uint64(uint32(s.Frame-root.Frame))<<32 | s.Offset&(1<<32-1)
		case s.Field != heapdump.FieldNone:
			key.field = uint32(s.Field)
		default:
			// A global holds objects of one size alike, whatever
			// their slots: the elements of an array of pointers.
			key.slot = a.g.Size(t)
		}
	}
	if root.Goroutine >= 0 && root.Goroutine < len(a.d.Goroutines) {
		return key, true, a.d.Goroutines[root.Goroutine].ID, true
	}
	return key, true, 0, false
}

// sharedKey returns what the key of shared holding t is made of (holdKey
// of kind 's'): the id of its set of holder signatures and its slot
// (sharedSlot), and whether the set names any of the program's holders.
// scanPart reads the same two parts, the set of holders and the size run,
// for runs of shared holdings on both cores: change them together.
func (a *Analysis) sharedKey(t heapdump.NodeID) (set uint32, slot uint64, user bool) {
	if set, user = a.sharedSet(t); !user {
		return 0, 0, false
	}
	return set, a.sharedSlot(t), true
}

// codeWord returns the first word of object v when it is not a heap
// address, 0 when it is: a closure's code pointer, which tells the timers
// that run different functions apart.
func (a *Analysis) codeWord(v heapdump.NodeID) uint64 {
	rec, err := a.g.ObjectRecord(v, 8)
	if err != nil {
		return 0
	}
	w := rec.Word(0)
	if p := a.d.Params; w >= p.ArenaStart && w < p.ArenaEnd {
		return 0
	}
	return w
}

// isRuntimeRoot reports whether root node r is one of the runtime's own
// globals, or the frame of a function of the runtime (runtime.chanrecv,
// runtime.gopark...): what they hold directly is the runtime's (a blocked
// goroutine's sudog in a channel's wait queue), not a holding of the
// program's.
func (a *Analysis) isRuntimeRoot(r heapdump.NodeID) bool {
	if a.isRuntimeGlobalRoot(r) {
		return true
	}
	root := a.g.Root(r)
	return root.Kind == heapdump.RootFrame && strings.HasPrefix(a.d.FrameFunc(root.Frame), "runtime.")
}

// sigID returns the id of the signature of root node r (see rootSig):
// roots with the same signature have the same id.
func (a *Analysis) sigID(r heapdump.NodeID) uint32 {
	i := int(r) - a.g.NumObjects()
	if a.sigIDs == nil {
		a.sigIDs = make([]uint32, a.g.NumRoots())
		a.sigIndex = map[string]uint32{}
	}
	if id := a.sigIDs[i]; id != 0 {
		return id - 1
	}
	parts, ok := a.sigPartsOf(r)
	var h uint64
	if ok {
		// Most roots are frames of a few functions: the recent answers
		// by their parts spare most of them a lookup in the map.
		h = recent.Hash(uint64(parts.fn)) ^ recent.Hash(parts.gopc+uint64(parts.kind))
		if id, found := a.sigRecent.Get(h, parts); found {
			a.sigIDs[i] = id + 1
			return id
		}
		if id, found := a.sigParts[parts]; found {
			a.sigRecent.Put(h, parts, id)
			a.sigIDs[i] = id + 1
			return id
		}
	}
	s := a.rootSig(r)
	id, found := a.sigIndex[s]
	if !found {
		id = uint32(len(a.sigNames))
		a.sigIndex[s] = id
		a.sigNames = append(a.sigNames, s)
	}
	if ok {
		if a.sigParts == nil {
			a.sigParts = map[sigParts]uint32{}
		}
		a.sigParts[parts] = id
		a.sigRecent.Put(h, parts, id)
	}
	a.sigIDs[i] = id + 1
	return id
}

// sigParts is what rootSig makes the signature of a frame, goroutine or
// panic root of.
type sigParts struct {
	kind   heapdump.RootKind
	fn     uint32 // a frame's function (Dump.FrameFuncID)
	gopc   uint64 // where its goroutine was created
	unsure bool   // a frame's outgoing arguments are unknown
}

// sigPartsOf returns the parts of root node r's signature, and false for
// a root of another kind.
func (a *Analysis) sigPartsOf(r heapdump.NodeID) (sigParts, bool) {
	root := a.g.Root(r)
	p := sigParts{kind: root.Kind}
	switch root.Kind {
	case heapdump.RootFrame:
		p.fn, p.unsure = a.d.FrameFuncID(root.Frame), root.Unsure
	case heapdump.RootGoroutine, heapdump.RootPanic:
	default:
		return sigParts{}, false
	}
	if root.Goroutine >= 0 && root.Goroutine < len(a.d.Goroutines) {
		p.gopc = a.d.Goroutines[root.Goroutine].GoPC
	}
	return p, true
}

// rootSig is the signature of root node r: what roots held the same way
// share. A frame's is its function and where its goroutine was created;
// a global's its symbol.
func (a *Analysis) rootSig(r heapdump.NodeID) string {
	root := a.g.Root(r)
	var gopc uint64
	if root.Goroutine >= 0 && root.Goroutine < len(a.d.Goroutines) {
		gopc = a.d.Goroutines[root.Goroutine].GoPC
	}
	switch root.Kind {
	case heapdump.RootFrame:
		s := fmt.Sprintf("frame|%s|%x", a.d.FrameFunc(root.Frame), gopc)
		if root.Unsure {
			s += "|unsure"
		}
		return s
	case heapdump.RootGoroutine:
		return fmt.Sprintf("goroutine|%x", gopc)
	case heapdump.RootPanic:
		return fmt.Sprintf("panic|%x", gopc)
	case heapdump.RootGlobal:
		if name := a.g.RootName(root); name != "" {
			return "global|" + name
		}
		// Unnamed, each slot is a root: the slots of one run (an array
		// of pointers, or neighbouring variables) hold alike.
		return fmt.Sprintf("global|%#x", a.slotRun(root.Addr))
	case heapdump.RootFinalizer, heapdump.RootQueuedFinalizer:
		fin := a.d.Finalizers
		if root.Kind == heapdump.RootQueuedFinalizer {
			fin = a.d.QueuedFinalizers
		}
		if root.Index >= 0 && root.Index < len(fin) {
			return fmt.Sprintf("%s|%x", root.Kind, fin[root.Index].FnPC)
		}
		return root.Kind.String()
	}
	return "other|" + a.g.RootName(root)
}

// keyOrder is the text groups of equal size are ordered by: a root's
// signature ("frame|...", "global|..."), then goroutines, shared objects
// and what the runtime's structures hold.
func (a *Analysis) keyOrder(k holdKey) string {
	name := func(id uint32) string {
		if id == 0 {
			return ""
		}
		return a.sigNames[id-1]
	}
	switch k.kind {
	case 'r':
		return "1|" + name(k.sig)
	case 'g':
		return "2|"
	case 'T':
		return fmt.Sprintf("2|timer|%x", k.slot)
	case 's':
		return "3|" + strings.Join(a.setHolders(k.sig), ",")
	}
	return "4|" + a.typedKeys[k.typed]
}

// groupHoldings groups the holdings, and the large objects, of the report
// with options o by key, and returns the groups of at least o.minSize,
// most retained first, and the members inside other members (nest).
// Large objects that only the runtime's structures reach (timers, whose
// path names the holder) are described with describe to be keyed by their
// typed paths.
func (a *Analysis) groupHoldings(o options, describe func([]heapdump.NodeID) ([]*held, error)) ([]*pending, *nesting, error) {
	n := heapdump.NodeID(a.g.NumObjects())
	// Large objects, and below which other large objects they are: only
	// the outermost large objects of a holding count against it.
	var large []heapdump.NodeID
	for v := range a.g.ObjectsOfSize(o.minSize) {
		if _, isG := a.gObject(v); a.reachable(v) && !isG { // a runtime.g is the runtime's
			large = append(large, v)
		}
	}
	slices.Sort(large)
	nested := a.nestedLarge(large, o.minSize)
	hl := a.largeHoldings(large, nested)

	byKey := map[holdKey]*pending{}
	var out []*pending
	var last *pending // consecutive holdings are often held alike
	get := func(key holdKey) *pending {
		if last != nil && last.key == key {
			return last
		}
		p := byKey[key]
		if p == nil {
			p = &pending{key: key, minSize: o.minSize, id: int32(len(out))}
			byKey[key] = p
			out = append(out, p)
		}
		last = p
		return p
	}
	// Holdings: each counts what it retains beyond its large objects.
	// large[li] is the first large object from v on, hl.tops[hi] the
	// first holding with large objects.
	li, hi := 0, 0
	var members []nestMember // holdings that can be inside another (nest), in node order
	var shared *pending      // the group of the last run of shared holdings, of set sharedSet and slot sharedSlot
	var sharedSet uint32
	var sharedSlot uint64
	addRun := func(run *sharedRun) {
		// Shared holdings with no large object, keyed as holdingKey does
		// (sharedKey), whose group is most often the last one's.
		set := a.sigSet(run.set)
		if set == 0 {
			return // the runtime's alone
		}
		if shared == nil || set != sharedSet || run.slot != sharedSlot {
			shared, sharedSet, sharedSlot = get(holdKey{kind: 's', sig: set, slot: run.slot}), set, run.slot
		}
		shared.addRun(run)
	}
	addOther := func(v heapdump.NodeID) {
		for li < len(large) && large[li] < v {
			li++
		}
		for hi < len(hl.tops) && hl.tops[hi] < v {
			hi++
		}
		key, user, gid, hasG := a.holdingKey(v)
		r, in := a.retained[v], uint64(0)
		if hi < len(hl.tops) && hl.tops[hi] == v {
			hl.keys[hi] = largeKey{key, gid, hasG, user, true}
			in = hl.in[hi]
		}
		if !user {
			return
		}
		key = a.mechanismKey(v, key)
		if key.mechSig != 0 && key.kind == 'T' {
			get(key).timerOwn += a.g.Size(a.Idom(v))
		}
		b := r - min(r, in)
		if li < len(large) && large[li] == v {
			return // a large object: an entry of its own below
		}
		p := get(key)
		p.add(a, v, b, gid, hasG)
		if key.kind == 'T' || key.kind == 'g' { // its holder is an object
			if key.kind == 'T' {
				b = 0 // a holding a timer is inside counts what the timer retains as its own large objects (largeHoldings): not twice
			}
			members = append(members, nestMember{v: v, group: p.id, bytes: b})
		}
	}
	// In node order, so that keys intern their sets and signatures in
	// the same order however many parts were scanned. The scan of every
	// object adds up what the super-root's kids retain on the way.
	scans := a.scanHoldings(n, large, hl)
	a.shared = [2]uint64{}
	for _, sc := range scans {
		a.shared[0] += sc.shared[0]
		a.shared[1] += sc.shared[1]
	}
	for _, sc := range scans {
		runs, others := sc.runs, sc.others
		for len(runs) > 0 || len(others) > 0 {
			if len(others) == 0 || len(runs) > 0 && runs[0].v < others[0] {
				addRun(&runs[0])
				runs = runs[1:]
			} else {
				addOther(others[0])
				others = others[1:]
			}
		}
	}
	// Large objects, grouped by the key of their holding, and whether they
	// are inside another.
	var runtimeHeld []heapdump.NodeID
	largeMembers := make([]nestMember, 0, len(large)) // in node order
	for i, v := range large {
		k := &hl.keys[hl.of[i]]
		if !k.known {
			t := a.topOf(v)
			k.key, k.user, k.gid, k.hasG = a.holdingKey(t)
			k.known = true
		}
		if !k.user {
			runtimeHeld = append(runtimeHeld, v)
			continue
		}
		key := k.key
		key.large, key.nested = true, nested[i]
		p := get(key)
		p.large = true
		p.add(a, v, a.retained[v], k.gid, k.hasG)
		largeMembers = append(largeMembers, nestMember{v: v, group: p.id, bytes: a.retained[v]})
	}
	// Large objects the runtime's structures hold, keyed by their typed
	// path (classify names a timer from it).
	if len(runtimeHeld) > 0 {
		var rm []nestMember // in node order, as runtimeHeld
		hs, err := describe(runtimeHeld)
		if err != nil {
			return nil, nil, err
		}
		for i, h := range hs {
			id, ok := a.typedIndex[h.key]
			if !ok {
				id = len(a.typedKeys)
				a.typedKeys = append(a.typedKeys, h.key)
				if a.typedIndex == nil {
					a.typedIndex = map[string]int{}
				}
				a.typedIndex[h.key] = id
			}
			p := get(holdKey{kind: 't', typed: uint32(id)})
			p.large = true
			if p.count == 0 {
				a.listOtherRoots(h)
				p.described = h
			}
			p.add(a, runtimeHeld[i], a.retained[runtimeHeld[i]], 0, false)
			p.goroutines = append(p.goroutines, h.Goroutines...)
			rm = append(rm, nestMember{v: runtimeHeld[i], group: p.id, bytes: a.retained[runtimeHeld[i]]})
		}
		largeMembers = mergeMembers(largeMembers, rm)
	}
	// Members inside another of their group fold into it, before the
	// groups are measured against MinSize, and before the groups of one
	// mechanism join.
	nest := a.nest(mergeMembers(members, largeMembers), slices.Clone(out), large, func(t heapdump.NodeID) *pending {
		if key, user, _, _ := a.holdingKey(t); user {
			return byKey[key]
		}
		return nil
	})
	out = a.joinMechanisms(out)
	// A global none of whose groups passes MinSize alone, but whose
	// groups of some size do together (an array of structs that point to
	// objects of two sizes), keeps those.
	globalSum, globalBig := map[uint32]uint64{}, map[uint32]bool{}
	isGlobal := func(p *pending) bool {
		return p.key.kind == 'r' && p.key.sig > 0 && strings.HasPrefix(a.sigNames[p.key.sig-1], "global|")
	}
	for _, p := range out {
		if isGlobal(p) {
			globalSum[p.key.sig] += p.bytes
			globalBig[p.key.sig] = globalBig[p.key.sig] || p.bytes >= o.minSize
		}
	}
	out = slices.DeleteFunc(out, func(p *pending) bool {
		together := isGlobal(p) && !globalBig[p.key.sig] && globalSum[p.key.sig] >= o.minSize && p.bytes >= o.minSize/16
		return p.bytes < o.minSize && !together
	})
	for _, p := range out {
		slices.Sort(p.goroutines)
		p.goroutines = slices.Compact(p.goroutines)
	}
	slices.SortStableFunc(out, func(x, y *pending) int {
		return cmp.Or(
			cmp.Compare(y.retained, x.retained),
			cmp.Compare(y.count, x.count),
			strings.Compare(a.keyOrder(x.key), a.keyOrder(y.key)),
			cmp.Compare(x.rep, y.rep))
	})
	return out, nest, nil
}

// largeHoldings are the holdings with large objects: their tops in
// increasing order, what the outermost large objects in each, and the
// timers under each, retain (in), and each one's key once known (keys).
// of gives for each large object the index of its holding.
type largeHoldings struct {
	tops []heapdump.NodeID
	in   []uint64
	keys []largeKey
	of   []int32
}

// largeKey is the key of a holding with large objects, with what
// holdingKey says of it; known once it is set.
type largeKey struct {
	key        holdKey
	gid        uint64
	hasG, user bool
	known      bool
}

// largeHoldings finds the holdings of large, sorted, whose nested says
// which are inside another, and of the timers: sorted slices rather than
// maps keyed by node, which a million large objects (--min-size 1) would
// make the report's largest cost.
func (a *Analysis) largeHoldings(large []heapdump.NodeID, nested []bool) largeHoldings {
	type entry struct {
		top   heapdump.NodeID
		large int32 // the index of a large object, -1 for a timer
		bytes uint64
	}
	timers := a.g.Timers()
	es := make([]entry, 0, len(large)+len(timers))
	for i, v := range large {
		e := entry{top: a.topOf(v), large: int32(i)}
		if !nested[i] {
			e.bytes = a.retained[v]
		}
		es = append(es, e)
	}
	// Timers hold what they retain as roots do: what a timer retains
	// counts for the holdings under it, not for the runtime's structures
	// that list it.
	for _, t := range timers {
		if top := a.topOf(t); top != heapdump.NoNode && top != t {
			es = append(es, entry{top: top, large: -1, bytes: a.retained[t]})
		}
	}
	slices.SortFunc(es, func(x, y entry) int { return cmp.Compare(x.top, y.top) })
	var h largeHoldings
	h.of = make([]int32, len(large))
	for i, e := range es {
		if i == 0 || e.top != es[i-1].top {
			h.tops = append(h.tops, e.top)
			h.in = append(h.in, 0)
		}
		j := len(h.tops) - 1
		h.in[j] += e.bytes
		if e.large >= 0 {
			h.of[e.large] = int32(j)
		}
	}
	h.keys = make([]largeKey, len(h.tops))
	return h
}

// nestedLarge reports, for each of the large objects (of at least min
// bytes), whether another large object of its holding dominates it. It
// walks each chain up to the holding's top or the first large object, so
// that no chain is walked twice past a large object: linear in the
// objects below large ones, which a long list of small nodes is not.
func (a *Analysis) nestedLarge(large []heapdump.NodeID, min uint64) []bool {
	out := make([]bool, len(large))
	// known[u] says whether a large object of its holding dominates node
	// u; walks stop at a node already known, so no chain is walked twice.
	known := make(map[heapdump.NodeID]bool)
	var walked []heapdump.NodeID
	for i, v := range large {
		walked = walked[:0]
		u, nested := v, false
		for t := a.topOf(v); u != t; {
			u = a.Idom(u)
			if a.g.Size(u) >= min {
				nested = true
				break
			}
			if k, ok := known[u]; ok {
				nested = k
				break
			}
			walked = append(walked, u)
		}
		out[i] = nested
		for _, w := range walked {
			known[w] = nested
		}
	}
	return out
}
