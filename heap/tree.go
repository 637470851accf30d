package heap

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/allochelper"
)

// This file gives viewers (package webview) the dominator tree node by
// node: a node's description, its children by retained size, page by page,
// and the paths from the roots to an object. Like the rest of an Analysis,
// these methods are not safe for concurrent use.

// Node is one node of the dominator tree, described for a viewer: an
// object, a root, or the super-root above all roots.
type Node struct {
	ID heapdump.NodeID `json:"id"`
	// Kind is "object", "root" or "roots" (the super-root).
	Kind string `json:"kind"`
	// Type is an object's Go type, "" when unknown.
	Type string `json:"type"`
	// Addr is an object's address, "" for other nodes.
	Addr          string `json:"addr,omitempty"`
	Size          uint64 `json:"size_bytes"`
	RetainedBytes uint64 `json:"retained_bytes"`
	Objects       uint64 `json:"retained_objects"`
	// Children counts the nodes this one immediately dominates.
	Children int `json:"child_count"`
	// Root describes a root node.
	Root *Holder `json:"root,omitempty"`
}

// Node kinds.
const (
	NodeObject    = "object"
	NodeRoot      = "root"
	NodeSuperRoot = "roots"
)

// maxTypeChain is the longest dominator chain Nodes follows from a root to
// type an object; deeper objects are typed from their own record only.
const maxTypeChain = 64

// maxEdgeScan is the most successors a node may have for Nodes to look
// among them for the next object of a chain.
const maxEdgeScan = 1 << 16

// Reachable reports whether a root reaches node v; false for a node that
// is not in the graph.
func (a *Analysis) Reachable(v heapdump.NodeID) bool {
	return int(v) < a.g.NumNodes() && a.reachable(v)
}

// DomChildren returns up to limit of the nodes v immediately dominates,
// from offset on, in the order of their retained bytes, largest first
// (those that retain as much in depth-first order), and how many there are. The first call builds the dominator tree's child
// lists (8 bytes a node). The first call for a node sorts its children,
// except for the first pages of a node with many children, which are
// selected in time linear in the number of children.
func (a *Analysis) DomChildren(v heapdump.NodeID, offset, limit int) ([]heapdump.NodeID, int) {
	if int(v) >= a.g.NumNodes() {
		return nil, 0
	}
	kids := a.domKids(v)
	n := len(kids)
	if offset < 0 || offset >= n || limit <= 0 {
		return nil, n
	}
	end := min(n, offset+limit)
	sorted := kids
	if a.kidsSorted[v/64]&(1<<(v%64)) == 0 {
		if end <= maxPartial && n >= 8*end {
			// A node with many children (the objects a map and a list
			// share hang from the super-root) and one of its first pages:
			// select the largest end children in linear time rather than
			// sort them all.
			sorted = a.largest(kids, a.kidRetained(v, kids), end)
		} else {
			a.sortKids(kids)
			a.kidsSorted[v/64] |= 1 << (v % 64)
			delete(a.wideRet, v) // in the old order
		}
	}
	out := make([]heapdump.NodeID, end-offset)
	for i, k := range sorted[offset:end] {
		out[i] = heapdump.NodeID(k)
	}
	return out, n
}

// maxPartial is the most children DomChildren selects without sorting all
// of a node's children; past that it sorts them all, once.
const maxPartial = 1 << 17

// sortKids sorts kids by retained bytes, largest first, those that retain
// as much in the order they were in: on copies of their retained sizes,
// several times faster than looking them up on each comparison when there
// are millions.
func (a *Analysis) sortKids(kids []uint32) {
	type kid struct {
		r    uint64
		i, v uint32
	}
	ks := make([]kid, len(kids))
	for i, v := range kids {
		ks[i] = kid{a.retained[v], uint32(i), v}
	}
	slices.SortFunc(ks, func(x, y kid) int { return cmp.Or(cmp.Compare(y.r, x.r), cmp.Compare(x.i, y.i)) })
	for i, k := range ks {
		kids[i] = k.v
	}
}

// minWide is the number of children from which DomChildren keeps a copy
// of the children's retained sizes, in their order, for the next pages;
// tests change it.
var minWide = 1 << 16

// kidRetained returns the retained sizes of kids, the unsorted children of
// v, by position: for a wide node, a copy made on first use, which later
// pages read in order rather than at random.
func (a *Analysis) kidRetained(v heapdump.NodeID, kids []uint32) []uint64 {
	if rs, ok := a.wideRet[v]; ok {
		return rs
	}
	rs := make([]uint64, len(kids))
	for i, c := range kids {
		rs[i] = a.retained[c]
	}
	if len(kids) >= minWide {
		if a.wideRet == nil {
			a.wideRet = map[heapdump.NodeID][]uint64{}
		}
		a.wideRet[v] = rs
	}
	return rs
}

// largest returns the k first of kids in the order of sortKids, sorted,
// without sorting the others; rs are their retained sizes, by position. It
// keeps them in a heap whose root is the last of them, so that most
// children of a wide node, which retain no more than that root, cost one
// comparison.
func (a *Analysis) largest(kids []uint32, rs []uint64, k int) []uint32 {
	h := make([]uint32, 0, k) // positions in kids
	// after says the child at position x comes after the one at y.
	after := func(x, y uint32) bool {
		rx, ry := rs[x], rs[y]
		return rx < ry || (rx == ry && x > y)
	}
	down := func() {
		for i := 0; ; {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && after(h[r], h[l]) {
				l = r
			}
			if !after(h[l], h[i]) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	var r0 uint64 // retained bytes of h[0], once the heap is full
	for p, r := range rs {
		if len(h) < k {
			h = append(h, uint32(p))
			for i := len(h) - 1; i > 0; {
				q := (i - 1) / 2
				if !after(h[i], h[q]) {
					break
				}
				h[i], h[q] = h[q], h[i]
				i = q
			}
			r0 = rs[h[0]]
			continue
		}
		if r <= r0 { // a later one that retains as much comes after
			continue
		}
		h[0] = uint32(p)
		down()
		r0 = rs[h[0]]
	}
	slices.SortFunc(h, func(x, y uint32) int { return cmp.Or(cmp.Compare(rs[y], rs[x]), cmp.Compare(x, y)) })
	out := make([]uint32, len(h))
	for i, p := range h {
		out[i] = kids[p]
	}
	return out
}

// PrepareTree builds the dominator tree's child lists, which DomChildren
// and Nodes otherwise build on first use. Unlike the other methods, it may
// be called concurrently with them: a viewer calls it in the background
// when it starts, so that its first tree page need not wait.
func (a *Analysis) PrepareTree() { a.domKids(a.g.SuperRoot()) }

// domKids returns the child list of v in the dominator tree, built on
// first use.
func (a *Analysis) domKids(v heapdump.NodeID) []uint32 {
	a.kidsOnce.Do(func() {
		k := a.tree.Children()
		a.kids = &k
		a.kidsSorted = make([]uint64, (a.g.NumNodes()+63)/64)
	})
	return a.kids.Succ[a.kids.Start[v]:a.kids.Start[v+1]]
}

// Nodes describes the nodes vs, parallel to it. Objects are typed from the
// path of immediate dominators from their root when every one points to
// the next (most do) and the path is short, else from their own record
// (a malloc header, a closure's code pointer); Type is "" when neither
// tells.
func (a *Analysis) Nodes(vs []heapdump.NodeID) []Node {
	out := make([]Node, len(vs))
	a.types.newSearch()
	for i, v := range vs {
		out[i] = a.node(v)
	}
	return out
}

// node describes v, typing an object as Nodes says.
func (a *Analysis) node(v heapdump.NodeID) Node {
	if int(v) >= a.g.NumNodes() {
		return Node{ID: v, Kind: NodeObject}
	}
	n := Node{
		ID:            v,
		RetainedBytes: a.retained[v],
		Objects:       a.RetainedObjects(v),
		Children:      len(a.domKids(v)),
	}
	switch {
	case v == a.g.SuperRoot():
		n.Kind = NodeSuperRoot
	case !a.g.IsObject(v):
		n.Kind = NodeRoot
		h := a.holder(v)
		n.Root = &h
	default:
		n.Kind = NodeObject
		n.Addr = fmt.Sprintf("%#x", a.g.ObjectAddr(v))
		n.Size = a.g.Size(v)
		n.Type = a.typeOf(v)
	}
	return n
}

// typeOf types object v from its dominator chain when that chain is a
// path of the graph from a root, else from its own record.
func (a *Analysis) typeOf(v heapdump.NodeID) string {
	if !a.reachable(v) {
		return a.typeAlone(v)
	}
	chain := []heapdump.NodeID{v}
	for u := range a.tree.Chain(uint32(v)) {
		w := heapdump.NodeID(u)
		if w == v {
			continue
		}
		if w == a.g.SuperRoot() || len(chain) > maxTypeChain || !a.hasEdge(w, chain[len(chain)-1]) {
			return a.typeAlone(v)
		}
		chain = append(chain, w)
		if !a.g.IsObject(w) {
			break
		}
	}
	if a.g.IsObject(chain[len(chain)-1]) {
		return a.typeAlone(v)
	}
	slices.Reverse(chain)
	steps, err := a.types.steps(chain)
	if err != nil || len(steps) == 0 {
		return a.typeAlone(v)
	}
	return steps[len(steps)-1].Type
}

// hasEdge reports whether u points to w, looking at no more than
// maxEdgeScan successors.
func (a *Analysis) hasEdge(u, w heapdump.NodeID) bool {
	s := a.g.Succ(u)
	return len(s) <= maxEdgeScan && slices.Contains(s, w)
}

// typeAlone types object v from its record alone: the type in its malloc
// header, or the function of a closure.
func (a *Analysis) typeAlone(v heapdump.NodeID) string {
	if a.Binary == nil {
		return ""
	}
	rec, err := a.g.ObjectRecord(v, 64)
	if err != nil {
		return ""
	}
	if code := a.g.Word(rec.Contents, 0); code != 0 {
		if site := a.funcSite(code); site != nil {
			return "closure " + site.Function
		}
	}
	if ht, ok := a.types.header(rec); ok {
		if ht.Size > 0 && int64(rec.Size)-mallocHeader >= 2*ht.Size {
			return "[]" + ht.Name
		}
		return ht.Name
	}
	return ""
}

// RootHolder describes root node v, false when v is not a root node.
func (a *Analysis) RootHolder(v heapdump.NodeID) (Holder, bool) {
	if a.g.Root(v) == nil {
		return Holder{}, false
	}
	return a.holder(v), true
}

// AllocSite returns the allocation stack of object v, innermost first, and
// its first frame outside the runtime and allocation helpers; nil when the
// dump has no sample for v.
func (a *Analysis) AllocSite(v heapdump.NodeID) (site *binsym.Position, stack []binsym.Position) {
	if !a.g.IsObject(v) {
		return nil, nil
	}
	b, ok := a.g.AllocSite(v)
	if !ok {
		return nil, nil
	}
	stack = slices.Clone(b.Stack)
	return firstSite(stack, allochelper.Is), stack
}

// RootPath is one way a root holds an object: the root, described as the
// report describes holders (a timer or a goroutine's labels when the path
// runs through the runtime's structures), and the typed steps from it.
type RootPath struct {
	Root Holder `json:"root"`
	// Steps are the objects from the root to the object, the object last.
	// A long path keeps its first and last maxPathEnds steps; Elided
	// counts those left out in between.
	Steps  []Step `json:"steps"`
	Elided int    `json:"elided_count"`
}

// Paths limits.
const (
	// maxPathTyped is the longest path Paths types; longer ones show
	// addresses and sizes only.
	maxPathTyped = 1024
	// maxPathEnds is how many steps of each end a long path keeps.
	maxPathEnds = 16
	// maxRootsSeen is how many roots Paths considers before it stops.
	maxRootsSeen = 64
)

// Paths returns up to max paths from roots to object v, shortest first,
// one per root: who holds v. It walks the graph backwards from v, breadth
// first, and stops once it has max roots other than the runtime's own
// globals (which reach much of the heap and are listed only when the path
// through them is a timer's or a goroutine's labels); it returns how many
// of the runtime's roots it passed over. Paths that name the same holder
// and first object (the roots of the runtime that reach one timer) are
// given once. The first call builds the reverse graph
// (8 bytes a node and 4 an edge).
func (a *Analysis) Paths(v heapdump.NodeID, max int) (paths []RootPath, runtimeRoots int, err error) {
	if !a.g.IsObject(v) || !a.reachable(v) || max <= 0 {
		return nil, 0, nil
	}
	if a.preds == nil {
		a.preds = reverse(a.g, nil)
		a.seen = make([]uint64, (a.g.NumNodes()+63)/64)
	}
	// next[u] is u's successor toward v plus one, 0 while u is unseen.
	next, p := a.searchParents(), a.preds
	next[v] = v + 1
	queue := []heapdump.NodeID{v}
	defer func() {
		for _, u := range queue {
			next[u] = 0
		}
	}()
	seenRoots := 0
	seen := map[string]bool{}
	for head := 0; head < len(queue) && len(paths) < max && seenRoots < maxRootsSeen; head++ {
		u := queue[head]
		for _, w := range p.succ[p.start[u]:p.start[u+1]] {
			if w == a.g.SuperRoot() || next[w] != 0 {
				continue
			}
			next[w] = u + 1
			queue = append(queue, w)
			if a.g.IsObject(w) {
				continue
			}
			seenRoots++
			path := []heapdump.NodeID{w}
			for x := u; ; x = next[x] - 1 {
				path = append(path, x)
				if x == v {
					break
				}
			}
			rp, err := a.rootPath(path)
			if err != nil {
				return nil, 0, err
			}
			if isRuntimeGlobal(rp.Root) || (rp.Root.Kind == heapdump.RootGoroutine && rp.Root.Detail == DetailG) {
				runtimeRoots++
				continue
			}
			// Roots of the runtime that reach one timer are one holder.
			key := rp.Root.Short() + "|" + rp.Root.Detail
			if len(rp.Steps) > 0 {
				key += "|" + rp.Steps[0].Addr
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			paths = append(paths, rp)
			if len(paths) == max || seenRoots == maxRootsSeen {
				break
			}
		}
	}
	return paths, runtimeRoots, nil
}

// rootPath describes path, from a root node to an object.
func (a *Analysis) rootPath(path []heapdump.NodeID) (RootPath, error) {
	rp := RootPath{Root: a.holder(path[0])}
	a.viaDefer(&rp.Root, path)
	var steps []typedStep
	if len(path) <= maxPathTyped {
		a.types.newSearch()
		var err error
		steps, err = a.types.steps(path)
		if err != nil {
			return rp, err
		}
		steps, _ = a.classify(&rp.Root, steps)
	} else {
		for _, x := range path[1:] {
			steps = append(steps, typedStep{node: x, Step: Step{
				Addr:          fmt.Sprintf("%#x", a.g.ObjectAddr(x)),
				Size:          a.g.Size(x),
				RetainedBytes: a.retained[x],
				Objects:       a.RetainedObjects(x),
			}})
		}
	}
	if n := len(steps); n > 2*maxPathEnds {
		rp.Elided = n - 2*maxPathEnds
		steps = append(steps[:maxPathEnds:maxPathEnds], steps[n-maxPathEnds:]...)
	}
	rp.Steps = make([]Step, len(steps))
	for i, s := range steps {
		rp.Steps[i] = s.Step
	}
	return rp, nil
}
