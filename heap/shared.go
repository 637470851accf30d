package heap

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
	"github.com/ctxleak/ctxleak/heapdump"
)

// Objects that no single root holds are the ones the super-root
// immediately dominates: shared tops. Each is keyed by the set of holder
// signatures that reach it (global main.left and global main.right), so
// that 500 buffers two globals share form one group. The sets are found in
// time linear in the edges into shared tops, which the dominator
// computation kept (dom.KeepRootKids): they are the only edges that cross
// from one holding to another, since every other object is dominated by
// the top of its holding, so all its predecessors are inside. The sets of
// holders flow along them, each set changing at most maxSetHolders+1
// times (a cut set takes no more holders).
// A set names the holders themselves (root nodes, and goroutines'
// runtime.g for what their g holds), so that a shared group's other roots
// are read from it; the key is made of their signatures. Only when a set
// was cut are the other roots found by a walk back through those edges.

// maxSetHolders is how many holders a shared top's set keeps: past it,
// the set keeps maxSetHolders of them and says that there are more.
const maxSetHolders = 16

// fromShared marks a shared top's predecessor that shares rewrote to the
// rank of the top of the shared holding it is in (ranks are below 1<<31).
const fromShared = 1 << 31

// moreIDs ends a set that was cut.
const moreIDs = ^uint32(0)

// shareIndex is what Analysis.shares computes.
type shareIndex struct {
	// open marks the shared tops, the kids of the super-root that are
	// objects but a runtime.g.
	open []uint64
	// kids are the nodes the super-root immediately dominates, which rank
	// numbers densely, with their predecessors (predsOf), dropped once the
	// sets are made when none was cut.
	kids *dom.RootKids
	// set is the id of each shared top's set of holders, by rank: an
	// index in sets, 0 for the empty set.
	set []uint32
	// The sets are sorted ids, moreIDs last when cut: node ids for a set
	// of holders, signature ids (sigID) for a set of signatures. They lie
	// end to end in setIDs, set x at setIDs[setEnd[x]:setEnd[x+1]] (see
	// members), set 0 empty: 100,000 goroutines' sets are one array the
	// collector need not scan, not 100,000 slices. setIndex finds a set by
	// the hash of its ids (setHash), setOverflow by its bytes when another
	// set had its hash first.
	setIDs      []uint32
	setEnd      []uint32
	setIndex    map[uint64]uint32
	setOverflow map[string]uint32
	key         []byte                // scratch: the bytes of a set (intern)
	merged      []uint32              // scratch: a set to intern (union, shares)
	hash        func([]uint32) uint64 // setHash; tests make it collide
	// sigSets is the set of signatures of each set of holders, but the
	// runtime's roots, built on demand (sigSet).
	sigSets map[uint32]uint32
	// lastA, lastB and lastU cache the last union; lastSet and lastSig
	// the last sigSet.
	lastA, lastB, lastU uint32
	lastSet, lastSig    uint32
	// runFirst, runEnd and runSize are the run of objects of one size
	// sharedSlot looked up last (heapdump.Graph.SizeRun).
	runFirst, runEnd heapdump.NodeID
	runSize          uint64
	// timers maps a timer's code pointer to the timer that stands in for
	// all that run it (timerStandIn).
	timers map[uint64]heapdump.NodeID
	// flows counts the flow edges between shared tops, and unions the
	// unions they made the sets take: each set changes at most
	// maxSetHolders+1 times and passes on at each change, so unions stay
	// within (maxSetHolders+2) times flows (tests check it).
	flows, unions int
}

// isShared reports whether object v is a shared top.
func (s *shareIndex) isShared(v heapdump.NodeID) bool {
	return int(v/64) < len(s.open) && s.open[v/64]&(1<<(v%64)) != 0
}

// rank returns the dense number of shared top v.
func (s *shareIndex) rank(v heapdump.NodeID) uint32 {
	k, _ := s.kids.Rank(uint32(v))
	return uint32(k)
}

// setOf returns the id of the set of holders of shared top v.
func (s *shareIndex) setOf(v heapdump.NodeID) uint32 { return s.set[s.rank(v)] }

// intern returns the id of the set of ids, sorted (moreIDs last, for a
// set that was cut), cut to limit ids.
func (s *shareIndex) intern(ids []uint32, limit int) uint32 {
	ids = slices.Compact(ids)
	more := len(ids) > 0 && ids[len(ids)-1] == moreIDs
	if more {
		ids = ids[:len(ids)-1]
	}
	if len(ids) > limit {
		ids, more = ids[:limit], true
	}
	if len(ids) == 0 {
		return 0
	}
	if more {
		ids = append(ids[:len(ids):len(ids)], moreIDs)
	}
	h := s.hash(ids)
	first, ok := s.setIndex[h]
	if ok && slices.Equal(s.members(first), ids) {
		return first
	}
	var key []byte
	if ok {
		// Another set has this hash: look for this one by its bytes, built
		// in a scratch buffer (a lookup of string(key) allocates nothing).
		key = s.key[:0]
		for _, id := range ids {
			key = binary.LittleEndian.AppendUint32(key, id)
		}
		s.key = key
		if id, ok := s.setOverflow[string(key)]; ok {
			return id
		}
	}
	id := uint32(len(s.setEnd) - 1)
	s.setIDs = append(s.setIDs, ids...)
	s.setEnd = append(s.setEnd, uint32(len(s.setIDs)))
	if !ok {
		s.setIndex[h] = id
	} else {
		if s.setOverflow == nil {
			s.setOverflow = map[string]uint32{}
		}
		s.setOverflow[string(key)] = id
	}
	return id
}

// members returns the ids of set x, which the caller must not modify.
func (s *shareIndex) members(x uint32) []uint32 {
	return s.setIDs[s.setEnd[x]:s.setEnd[x+1]:s.setEnd[x+1]]
}

// setHash hashes a set's ids (FNV-1a over the ids, then mixed).
func setHash(ids []uint32) uint64 {
	h := uint64(14695981039346656037)
	for _, id := range ids {
		h ^= uint64(id)
		h *= 1099511628211
	}
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// cut reports whether set x was cut.
func (s *shareIndex) cut(x uint32) bool {
	ids := s.members(x)
	return len(ids) > 0 && ids[len(ids)-1] == moreIDs
}

// union returns the id of the union of sets of holders x and y, or x
// when x was cut: a cut set keeps the holders it had when it was cut,
// and says there are more, so that no set changes more than
// maxSetHolders+1 times (the walk back of reachersOfShared finds them
// all).
func (s *shareIndex) union(x, y uint32) uint32 {
	switch {
	case x == y || y == 0:
		return x
	case x == s.lastA && y == s.lastB:
		return s.lastU // the flow along a chain of tops makes one union again and again
	case s.cut(x):
		return x
	case x == 0:
		return y
	case subset(s.members(y), s.members(x)):
		return x
	case s.cut(y) && cutKeeps(s.members(y), s.members(x)):
		return y // as in a wait queue, where each sudog's set flows into the next's
	}
	s.merged = merge(s.merged[:0], s.members(x), s.members(y))
	id := s.intern(s.merged, maxSetHolders)
	s.lastA, s.lastB, s.lastU = x, y, id
	return id
}

// cutKeeps reports whether cut set y, cut again with the members of set x
// (sorted, not cut) added, is y: y has maxSetHolders members, the most a
// cut set keeps, and each member of x is one of them or sorts after them
// all.
func cutKeeps(y, x []uint32) bool {
	ys := y[:len(y)-1] // but moreIDs
	if len(ys) != maxSetHolders {
		return false
	}
	for _, id := range x {
		if id > ys[len(ys)-1] {
			return true // and so are the rest
		}
		if _, ok := slices.BinarySearch(ys, id); !ok {
			return false
		}
	}
	return true
}

// merge appends the sorted sets a and b to dst, merged in order.
func merge(dst, a, b []uint32) []uint32 {
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			dst, a = append(dst, a[0]), a[1:]
		} else {
			dst, b = append(dst, b[0]), b[1:]
		}
	}
	return append(append(dst, a...), b...)
}

// subset reports whether sorted set a is inside sorted set b.
func subset(a, b []uint32) bool {
	if len(a) > len(b) {
		return false
	}
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
	}
	return true
}

// timerStandIn returns h, or when h is a timer the first timer seen that
// runs the same code: timers that run one function are one holder in the
// sets, so that 20,000 pending timers sharing a parent context do not cut
// every set they flow into.
func (s *shareIndex) timerStandIn(a *Analysis, h heapdump.NodeID) heapdump.NodeID {
	if !a.g.IsTimer(h) {
		return h
	}
	code := a.timerCode(h, func(uint64) bool { return true })
	if s.timers == nil {
		s.timers = map[uint64]heapdump.NodeID{}
	}
	if first, ok := s.timers[code]; ok {
		return first
	}
	s.timers[code] = h
	return h
}

// shares returns the shared tops of the analysis and their sets of
// holders, computed on first use.
func (a *Analysis) shares() *shareIndex { return a.computeShares(nil) }

// computeShares is shares, which runs alongside, if not nil, on the other
// core while the sets flow on this one, which is all the flow needs, and
// returns once both are done.
func (a *Analysis) computeShares(alongside func()) *shareIndex {
	if a.shareIdx != nil {
		if alongside != nil {
			alongside()
		}
		return a.shareIdx
	}
	kids := a.rootKids
	a.rootKids = nil
	s := &shareIndex{
		open:     make([]uint64, (a.g.NumNodes()+63)/64),
		kids:     kids,
		setIndex: map[uint64]uint32{},
		hash:     setHash,
		sigSets:  map[uint32]uint32{},
		setEnd:   []uint32{0, 0},
		set:      make([]uint32, kids.Len()),
	}
	a.shareIdx = s
	// The shared tops: every object the super-root immediately
	// dominates, but a runtime.g, which is the runtime's; a word of 64
	// nodes at a time.
	a.prepareConcurrent()
	objects := a.g.NumObjects()
	for w, kw := range kids.Words()[:(objects+63)/64] {
		if w < len(a.gNodes) {
			kw &^= a.gNodes[w]
		}
		if w == objects/64 {
			kw &= 1<<(objects%64) - 1 // the root nodes that follow the objects
		}
		s.open[w] = kw
	}
	// The edges into each shared top from outside its holding, on both
	// cores, which take the next of classifyParts shares of the tops as
	// they finish one (classifySeeds): one from another shared holding
	// flows, any other seeds the top's set with its holder. The seeds are
	// interned after, in rank order, so that the ids of sets and the
	// timers standing in for others do not depend on which core ran
	// first.
	tops := len(s.set)
	fwdStart := make([]uint32, tops+2)
	a.holdingTops()
	parts := 1
	if tops >= classifyParallelMin {
		parts = classifyParts
	}
	several := make([][]seedRun, parts)
	var next atomic.Int64
	classify := func() {
		for part := int(next.Add(1) - 1); part < parts; part = int(next.Add(1) - 1) {
			several[part] = a.classifySeeds(s, part*tops/parts, (part+1)*tops/parts, fwdStart)
		}
	}
	var wg sync.WaitGroup
	if parts > 1 {
		wg.Go(classify)
	}
	classify()
	wg.Wait()
	// The flow edges are placed by source, those from the lower half of
	// the ranks on the other core, the rest on this one, which then
	// interns the seeds: they share nothing.
	fwd := s.countFlowEdges(fwdStart)
	half := uint32(tops / 2) // sources from this rank on are this core's
	wg.Go(func() { s.placeFlowEdges(fwd, fwdStart, 0, half) })
	s.placeFlowEdges(fwd, fwdStart, half, uint32(tops))
	s.internSeeds(a, several)
	wg.Wait()
	fwdStart = fwdStart[:tops+1]
	if alongside != nil {
		wg.Go(alongside)
		defer wg.Wait()
	}
	// Let the sets flow: a shared top whose set changed passes it on. A
	// set changes at most maxSetHolders+1 times (a cut set takes no
	// more, see union), so the work is linear. First every top with a set
	// passes it on, in rank order; a top whose set changes after its turn
	// waits in a queue, at most once at a time, so that a top many others
	// flow into passes its set on once they all have, not once per change.
	s.flows = len(fwd)
	s.flow(fwd, fwdStart)
	// The predecessors are kept for the walks back from sets that were
	// cut (reachersOfShared), and only then.
	if !slices.Contains(s.setIDs, moreIDs) {
		kids.DropPreds()
	}
	return s
}

// flow lets the sets flow along the flow edges, those of source k at
// fwd[fwdStart[k]:fwdStart[k+1]] (see computeShares). Most edges join
// tops of one set: the loops skip those, and pass calls the others but,
// in the queue, those that make the last union again.
func (s *shareIndex) flow(fwd, fwdStart []uint32) {
	set := s.set
	queued := make([]uint64, (len(set)+63)/64)
	var queue []uint32
	for k := range uint32(len(set)) {
		y := set[k]
		if y == 0 {
			continue
		}
		out := fwd[fwdStart[k]:fwdStart[k+1]]
		s.unions += len(out)
		for _, to := range out {
			if set[to] != y {
				queue = s.pass(k, to, true, queue, queued)
			}
		}
	}
	head := 0
	for head < len(queue) {
		k := queue[head]
		head++
		queued[k/64] &^= 1 << (k % 64)
		y := set[k]
		out := fwd[fwdStart[k]:fwdStart[k+1]]
		s.unions += len(out)
		for _, to := range out {
			x := set[to]
			if x == y {
				continue
			}
			if x != s.lastA || y != s.lastB {
				queue = s.pass(k, to, false, queue, queued)
				continue
			}
			// The union the flow made last, again, as along a chain of
			// tops: what pass does, without asking union.
			set[to] = s.lastU
			if queued[to/64]&(1<<(to%64)) == 0 {
				queued[to/64] |= 1 << (to % 64)
				queue = append(queue, to)
			}
		}
		if head > 1<<12 && 2*head > len(queue) {
			queue = queue[:copy(queue, queue[head:])]
			head = 0
		}
	}
}

// pass passes the set of shared top k on to top to, of another set, and
// returns queue with to when its set changed and it must pass it on in
// turn: unless it is marked in queued already or, in the first pass
// (first), its turn is to come.
func (s *shareIndex) pass(k, to uint32, first bool, queue []uint32, queued []uint64) []uint32 {
	x := s.set[to]
	u := s.union(x, s.set[k])
	if u == x {
		return queue
	}
	s.set[to] = u
	if (first && to > k) || queued[to/64]&(1<<(to%64)) != 0 {
		return queue // its turn is to come
	}
	queued[to/64] |= 1 << (to % 64)
	return append(queue, to)
}

// internSeeds gives each shared top with seeds its set of holders: the
// one holder classifySeeds left in s.set, or its run in several, timers
// standing in for those that run the same code (timerStandIn). Sets are
// interned in rank order, so that their ids do not depend on timing.
func (s *shareIndex) internSeeds(a *Analysis, several [][]seedRun) {
	var run, prev []uint32
	prevID := uint32(0)
	prevOne := uint32(0) // the entry of the last top of one holder, whose set is prevID
	for k := range s.set {
		for len(several) > 1 && len(several[0]) == 0 {
			several = several[1:]
		}
		if x := s.set[k]; x&oneHolder != 0 && x == prevOne {
			s.set[k] = prevID // most tops, held as the one before
			continue
		}
		run = run[:0]
		switch rest := several[0]; {
		case s.set[k]&oneHolder != 0:
			run = append(run, s.set[k]&^oneHolder)
		case len(rest) > 0 && rest[0].k == k:
			run = append(run, rest[0].holders...)
			several[0] = rest[1:]
		}
		if len(run) == 0 {
			continue
		}
		for i, h := range run {
			run[i] = uint32(s.timerStandIn(a, heapdump.NodeID(h)))
		}
		if len(run) > maxSetHolders {
			slices.Sort(run)
		} else {
			for j := 1; j < len(run); j++ { // most runs have one or two
				for i := j; i > 0 && run[i] < run[i-1]; i-- {
					run[i], run[i-1] = run[i-1], run[i]
				}
			}
		}
		if !slices.Equal(run, prev) {
			s.merged = append(s.merged[:0], run...) // intern may compact it
			prevID = s.intern(s.merged, maxSetHolders)
			prev = append(prev[:0], run...)
		}
		prevOne = 0
		if s.set[k]&oneHolder != 0 {
			prevOne = s.set[k]
		}
		s.set[k] = prevID
	}
}

// countFlowEdges returns an array for the flow edges between shared tops
// by source rank, whose counts fwdStart holds at source rank+2
// (classifySeeds), and leaves each source's start at fwdStart[rank+1]:
// placeFlowEdges places them.
func (s *shareIndex) countFlowEdges(fwdStart []uint32) []uint32 {
	for k := 2; k < len(fwdStart); k++ {
		fwdStart[k] += fwdStart[k-1]
	}
	n := int(fwdStart[len(fwdStart)-1])
	return make([]uint32, n)
}

// placeFlowEdges places the flow edges from the shared tops of ranks lo
// to hi-1 in fwd, by source rank, those of source k at
// fwd[fwdStart[k]:fwdStart[k+1]] once all are placed: each at
// fwdStart[source+1]++, which leaves fwdStart[source+1] where the next
// source's begin. It reads the predecessors classifySeeds rewrote, in
// order: calls for disjoint ranges of sources may run at once.
func (s *shareIndex) placeFlowEdges(fwd, fwdStart []uint32, lo, hi uint32) {
	for k := range uint32(s.kids.Len()) {
		for _, p := range s.kids.Preds(int(k)) {
			if src := p &^ fromShared; p&fromShared != 0 && src != k && src >= lo && src < hi {
				fwd[fwdStart[src+1]] = k
				fwdStart[src+1]++
			}
		}
	}
}

// classifyParts is the number of shares of the shared tops that
// computeShares classifies, from classifyParallelMin tops on: the cores
// take them as they finish one, so that a slow share, or a slow core,
// does not leave the other idle for long.
const classifyParts = 32

// classifyParallelMin is the number of shared tops from which
// computeShares classifies them in shares on both cores; tests lower it.
var classifyParallelMin = 1 << 14

// oneHolder marks a shared top's entry in shareIndex.set that classifySeeds
// left as its one holder, a node id, rather than a set id.
const oneHolder = 1 << 31

// seedRun is a shared top of rank k that classifySeeds found several
// holders for.
type seedRun struct {
	k       int
	holders []uint32
}

// classifySeeds reads the predecessors of the shared tops of ranks lo to hi-1.
// One in a shared holding is rewritten in place to the rank of that
// holding's top, marked fromShared (its own rank, for an edge from inside
// its holding), and counted at fwdStart[that rank+2], atomically: the
// other shares of the tops count in the same array. The holders of the
// others are a top's seeds: its entry in s.set becomes its one holder,
// marked oneHolder, and a top of several is returned, in rank order.
func (a *Analysis) classifySeeds(s *shareIndex, lo, hi int, fwdStart []uint32) []seedRun {
	var several []seedRun
	var run []uint32
	// predKind, with its common case inline: an object that is not a
	// runtime.g, in a holding of an object.
	tops, gNodes, objects := a.holdingTops(), a.gNodes, uint32(a.g.NumObjects())
	for k, u := range s.kids.Ranks(lo, hi) {
		w := heapdump.NodeID(u)
		if !s.isShared(w) {
			continue
		}
		run = run[:0]
		preds := s.kids.Preds(k)
		for i, p := range preds {
			src, shared, h := heapdump.NoNode, false, heapdump.NoNode
			if t := tops[p]; p < objects && uint32(t) < objects && gNodes[p/64]&(1<<(p%64)) == 0 {
				if s.open[t/64]&(1<<(t%64)) != 0 {
					src, shared = t, true
				} else {
					h = a.Idom(t) // a root node, or a runtime.g
				}
			} else {
				src, shared, h = a.predKind(heapdump.NodeID(p), w)
			}
			if shared {
				r := s.rank(src)
				preds[i] = r | fromShared
				if r != uint32(k) {
					atomic.AddUint32(&fwdStart[r+2], 1)
				}
			} else if h != heapdump.NoNode {
				run = append(run, uint32(h))
			}
		}
		switch len(run) {
		case 0:
		case 1:
			s.set[k] = run[0] | oneHolder
		default:
			several = append(several, seedRun{k, slices.Clone(run)})
		}
	}
	return several
}

// predKind says what node u, which points to shared top w, is: in the
// shared holding of top src (shared), or else held by holder. The holder
// is the root node itself, the root that holds u's holding, or the
// runtime.g of the goroutine that does (for an edge from a runtime.g, when
// its pprof labels point to w); NoNode for a runtime.g's other fields and
// for garbage.
func (a *Analysis) predKind(u, w heapdump.NodeID) (src heapdump.NodeID, shared bool, holder heapdump.NodeID) {
	if !a.g.IsObject(u) {
		return heapdump.NoNode, false, u
	}
	if _, isG := a.gObject(u); isG {
		if a.labelsPoint(u, w) {
			return heapdump.NoNode, false, u
		}
		return heapdump.NoNode, false, heapdump.NoNode
	}
	t := a.topOf(u)
	switch {
	case t == heapdump.NoNode:
		return heapdump.NoNode, false, heapdump.NoNode
	case a.shareIdx.isShared(t):
		return t, true, heapdump.NoNode
	}
	return heapdump.NoNode, false, a.Idom(t) // a root node, or a runtime.g
}

// goroutineSigID returns the signature id of goroutine gi as the holder of
// what its runtime.g holds: goroutines created at the same place share it.
func (a *Analysis) goroutineSigID(gi int) uint32 {
	if a.sigIDs == nil {
		a.sigIDs = make([]uint32, a.g.NumRoots())
		a.sigIndex = map[string]uint32{}
	}
	sig := fmt.Sprintf("g|%x", a.d.Goroutines[gi].GoPC)
	id, ok := a.sigIndex[sig]
	if !ok {
		id = uint32(len(a.sigNames))
		a.sigIndex[sig] = id
		a.sigNames = append(a.sigNames, sig)
	}
	return id
}

// sharedSet returns the id of the set of holder signatures of object t,
// a shared top, and whether it names any of the program's holders (the
// runtime's roots are left out).
func (a *Analysis) sharedSet(t heapdump.NodeID) (uint32, bool) {
	s := a.shares()
	if !s.isShared(t) {
		return 0, false
	}
	id := a.sigSet(s.setOf(t))
	return id, id != 0
}

// sigSet returns the id of the set of signatures of set of holders x, but
// the runtime's roots.
func (a *Analysis) sigSet(x uint32) uint32 {
	s := a.shareIdx
	if x == s.lastSet && x != 0 {
		return s.lastSig
	}
	if id, ok := s.sigSets[x]; ok {
		s.lastSet, s.lastSig = x, id
		return id
	}
	var sigs []uint32
	for _, h := range s.members(x) {
		v := heapdump.NodeID(h)
		switch gi, isG := a.gObject(v); {
		case h == moreIDs:
			sigs = append(sigs, moreIDs)
		case isG:
			sigs = append(sigs, a.goroutineSigID(gi))
		case !a.g.IsObject(v) && !a.isRuntimeRoot(v):
			sigs = append(sigs, a.sigID(v))
		}
	}
	slices.Sort(sigs)
	id := uint32(0)
	if len(sigs) > 0 && sigs[0] != moreIDs { // some of the program's
		id = s.intern(sigs, maxSetHolders)
	}
	s.sigSets[x] = id
	return id
}

// setHolders names the holders of a set of signatures, for people:
// "global main.left", "goroutines in main.wait", "goroutines created at
// main.serve"; "more" ends a set that was cut.
func (a *Analysis) setHolders(set uint32) []string {
	s := a.shares()
	var out []string
	for _, id := range s.members(set) {
		if id == moreIDs {
			out = append(out, "more")
			continue
		}
		out = append(out, a.sigText(a.sigNames[id]))
	}
	return out
}

// heldBy names every holder signature that reaches shared top t, for
// people, as setHolders does, but complete and ordered: globals first,
// then timers, then goroutines and the rest, each kind by name, so that a
// list cut short for text shows the few globals and timers before the
// many goroutines. A set cut at maxSetHolders is completed by the walk
// back of sharedReachers: every signature is listed once.
func (a *Analysis) heldBy(t heapdump.NodeID) []string {
	if !a.shares().isShared(t) {
		return nil
	}
	// Signatures are told apart by number, and put in words once each:
	// 100,000 goroutines may share a parent context.
	type sigKey struct {
		kind byte // 'r' a root's signature id, 'g' a goroutine's creation site, 't' a timer's code
		id   uint64
	}
	seen := map[sigKey]bool{}
	var out []string
	a.sharedReachers(t, func(r reacher) bool {
		var k sigKey
		switch {
		case r.timer != heapdump.NoNode:
			k = sigKey{'t', a.timerCode(r.timer, func(uint64) bool { return true })}
		case r.root == heapdump.NoNode:
			k = sigKey{'g', a.d.Goroutines[r.gIndex].GoPC}
		case a.isRuntimeRoot(r.root):
			return true
		default:
			k = sigKey{'r', uint64(a.sigID(r.root))}
		}
		if seen[k] {
			return true
		}
		seen[k] = true
		switch k.kind {
		case 't':
			out = append(out, a.timerSigText(r.timer))
		case 'g':
			out = append(out, a.sigText(a.sigNames[a.goroutineSigID(r.gIndex)]))
		default:
			out = append(out, a.sigText(a.sigNames[k.id]))
		}
		return true
	})
	out = slices.Compact(slices.Sorted(slices.Values(out)))
	slices.SortFunc(out, func(x, y string) int {
		return cmp.Or(cmp.Compare(holderRank(x), holderRank(y)), strings.Compare(x, y))
	})
	return out
}

// holderRank orders the names of heldBy: globals, timers, the rest.
func holderRank(name string) int {
	switch {
	case strings.HasPrefix(name, "global "):
		return 0
	case strings.HasPrefix(name, "timers"):
		return 1
	}
	return 2
}

// timerSigText names timer t as a holder signature: "timers that will
// run context.WithDeadlineCause.func2", by the function it will run.
func (a *Analysis) timerSigText(t heapdump.NodeID) string {
	if h := a.timerHolder(t); h.Function != "" {
		return "timers that will run " + h.Function
	}
	return "timers"
}

// sigText turns a signature (rootSig, goroutineSigID) into words.
func (a *Analysis) sigText(sig string) string {
	f := strings.Split(sig, "|")
	created := func(hex string) string {
		var pc uint64
		if _, err := fmt.Sscanf(hex, "%x", &pc); err != nil || a.Binary == nil {
			return ""
		}
		if c, ok := a.siteOf(pc); ok {
			return " created at " + c.Name
		}
		return ""
	}
	switch {
	case f[0] == "global" && len(f) >= 2:
		return "global " + f[1]
	case f[0] == "frame" && len(f) >= 3:
		return "goroutines in " + f[1] + created(f[2])
	case f[0] == "goroutine" && len(f) >= 2:
		return "unstarted goroutines" + created(f[1])
	case f[0] == "g" && len(f) >= 2:
		return "goroutines" + created(f[1])
	}
	return strings.ReplaceAll(sig, "|", " ")
}

// reachersOfShared is reachersOfObject for a shared top v and nothing to
// avoid. Its set of holders lists them, unless it was cut: then it walks
// back from v through the predecessors of shared tops only (predsOf), and
// from any other object straight to what holds its holding.
func (a *Analysis) reachersOfShared(v heapdump.NodeID) []reacher {
	var out []reacher
	a.sharedReachers(v, func(r reacher) bool {
		out = append(out, r)
		return true
	})
	return out
}

// sharedReachers calls yield with each of reachersOfShared, until yield
// returns false.
func (a *Analysis) sharedReachers(v heapdump.NodeID, yield func(reacher) bool) {
	s := a.shares()
	if set := s.setOf(v); !s.cut(set) {
		for _, h := range s.members(set) {
			if !yield(a.reacherOf(heapdump.NodeID(h))) {
				return
			}
		}
		return
	}
	// Back along the predecessors of the shared tops, by rank, which
	// classifySeeds left as the ranks of the shared tops they are in
	// (fromShared) or as themselves.
	k0 := s.rank(v)
	seenTop := map[uint32]bool{k0: true}
	seen := map[heapdump.NodeID]bool{}
	queue := []uint32{k0}
	for head := 0; head < len(queue); head++ {
		k := queue[head]
		for _, p := range s.kids.Preds(int(k)) {
			if src := p &^ fromShared; p&fromShared != 0 {
				if !seenTop[src] {
					seenTop[src] = true
					queue = append(queue, src)
				}
				continue
			}
			w, top := heapdump.NodeID(p), heapdump.NoNode
			if _, isG := a.gObject(w); isG {
				top = heapdump.NodeID(s.kids.Kid(int(k))) // whose labels may point to it
			}
			if _, _, h := a.predKind(w, top); h != heapdump.NoNode && !seen[h] {
				seen[h] = true
				if !yield(a.reacherOf(h)) {
					return
				}
			}
		}
	}
}

// reacherOf returns holder h, a root node, a runtime.g or a timer, as a
// reacher.
func (a *Analysis) reacherOf(h heapdump.NodeID) reacher {
	if gi, isG := a.gObject(h); isG {
		return reacher{root: heapdump.NoNode, g: h, gIndex: gi, timer: heapdump.NoNode}
	}
	if a.g.IsTimer(h) {
		return reacher{root: heapdump.NoNode, g: heapdump.NoNode, timer: h}
	}
	return reacher{root: h, g: heapdump.NoNode, timer: heapdump.NoNode}
}

// nearestMembers makes the first member of each shared holding group in ps
// the one nearest to a root: the first a breadth-first search from the
// super-root reaches, through the program's roots (not the runtime's). Its path is the shortest of the group's, and the
// search stops there, where a search for the member of lowest node id
// would go through much of the heap.
func (a *Analysis) nearestMembers(ps []*pending) {
	type setSlot struct {
		set  uint32
		slot uint64
	}
	want := map[setSlot]*pending{}
	for _, p := range ps {
		if p.key.kind == 's' && !p.key.large && p.described == nil {
			want[setSlot{p.key.sig, p.key.slot}] = p
		}
	}
	if len(want) == 0 {
		return
	}
	s := a.shares()
	seen := make([]uint64, (a.g.NumNodes()+63)/64)
	sr := a.g.SuperRoot()
	seen[sr/64] |= 1 << (sr % 64)
	queue := []heapdump.NodeID{sr}
	for head := 0; head < len(queue) && len(want) > 0; head++ {
		if u := queue[head]; !a.g.IsObject(u) && u != sr && a.isRuntimeRoot(u) {
			continue // a member the program's roots reach says more
		}
		for _, w := range a.g.Succ(queue[head]) {
			if seen[w/64]&(1<<(w%64)) != 0 {
				continue
			}
			seen[w/64] |= 1 << (w % 64)
			queue = append(queue, w)
			if !s.isShared(w) {
				continue
			}
			k := setSlot{a.sigSet(s.setOf(w)), a.sharedSlot(w)}
			if p := want[k]; p != nil && a.g.Size(w) < p.minSize {
				p.rep = w
				delete(want, k)
			}
		}
	}
}

// sharedSlot is the slot of shared top t's key: its size. A context and
// the children it shares its holders with are not one pile. Sizes are
// looked up a run of objects at a time: groupHoldings asks in order.
func (a *Analysis) sharedSlot(t heapdump.NodeID) uint64 {
	s := a.shares()
	if t < s.runFirst || t >= s.runEnd {
		s.runFirst, s.runEnd, s.runSize = a.g.SizeRun(t)
	}
	return s.runSize
}
