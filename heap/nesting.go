package heap

import (
	"cmp"
	"slices"

	"github.com/ctxleak/ctxleak/heapdump"
)

// A member of a group can be inside another member: a large object inside
// a large object (a chain of them), a timer's holding inside a holding.
// A group counts what its members retain together, the retained size of
// their union: a member inside another member of its group is counted in
// the group's object count but not again in its bytes (it folds into the
// outermost). A member inside a member of another group is counted by
// both groups: the report states that overlap (Report.OverlapBytes).
// Only large objects and the holdings of timers and goroutines' runtime.g
// can be inside another member: the holder of any other holding is a root
// node or the super-root.

// nestMember is a member that can be inside another, with its group and
// what it counts towards MinSize there.
type nestMember struct {
	v     heapdump.NodeID
	p     *pending
	bytes uint64
}

// nesting is the forest of the members that are inside another member and
// of those they are inside: each node's nearest member above it.
type nesting struct {
	nodes  []heapdump.NodeID // sorted
	parent []int32           // index in nodes, -1 for none
	group  []*pending        // nil for a holding in no group (the runtime's)
	folded []bool            // inside another member of its group
	// kids lists each node's kids, kids[start[i]:start[i+1]], and roots
	// the nodes with no parent: the forest read top down.
	start []int32
	kids  []int32
	roots []int32
}

// nest finds, for each of members (large objects and the holdings of
// timers and runtime.g), the nearest member above it, folds the members
// inside another member of their group into it (see above), and returns
// the forest for the report's overlap. lookup returns the group of a
// holding top that is not one of members, nil for none.
func (a *Analysis) nest(members []nestMember, large []heapdump.NodeID, lookup func(heapdump.NodeID) *pending) *nesting {
	slices.SortFunc(members, func(x, y nestMember) int { return cmp.Compare(x.v, y.v) })
	above := make([]heapdump.NodeID, len(members))
	known := map[heapdump.NodeID]heapdump.NodeID{} // the nearest member above each node walked
	var walked []heapdump.NodeID
	for i, m := range members {
		above[i] = a.memberAbove(m.v, large, known, &walked)
	}
	n := &nesting{}
	for _, m := range members {
		n.nodes = append(n.nodes, m.v)
	}
	for _, u := range above {
		if u != heapdump.NoNode {
			n.nodes = append(n.nodes, u)
		}
	}
	slices.Sort(n.nodes)
	n.nodes = slices.Compact(n.nodes)
	n.parent = make([]int32, len(n.nodes))
	n.group = make([]*pending, len(n.nodes))
	for i := range n.parent {
		n.parent[i] = -1
	}
	for i, m := range members {
		k := n.index(m.v)
		n.group[k] = m.p
		if above[i] != heapdump.NoNode {
			n.parent[k] = int32(n.index(above[i]))
		}
	}
	for k, v := range n.nodes {
		if n.group[k] == nil {
			n.group[k] = lookup(v) // a holding above a member
		}
	}
	n.link()
	n.fold(a, members)
	return n
}

// index returns the index of node v, which must be in n.nodes.
func (n *nesting) index(v heapdump.NodeID) int {
	k, _ := slices.BinarySearch(n.nodes, v)
	return k
}

// memberAbove returns the nearest member above v on its dominator chain:
// a large object or the top of a holding, NoNode when a root node or the
// super-root comes first. known keeps the answer for every node walked,
// so that no chain is walked twice: linear in the nodes between members.
func (a *Analysis) memberAbove(v heapdump.NodeID, large []heapdump.NodeID, known map[heapdump.NodeID]heapdump.NodeID, walked *[]heapdump.NodeID) heapdump.NodeID {
	*walked = (*walked)[:0]
	found := heapdump.NoNode
	s := a.shares()
	for u := a.Idom(v); u != heapdump.NoNode && a.g.IsObject(u); u = a.Idom(u) {
		if k, ok := known[u]; ok {
			found = k
			break
		}
		if _, ok := slices.BinarySearch(large, u); ok || a.heldTops[u/64]&(1<<(u%64)) != 0 || s.isShared(u) {
			found = u
			break
		}
		*walked = append(*walked, u)
	}
	for _, w := range *walked {
		known[w] = found
	}
	return found
}

// link lists the kids of each node and the roots of the forest.
func (n *nesting) link() {
	n.start = make([]int32, len(n.nodes)+1)
	for k, p := range n.parent {
		if p < 0 {
			n.roots = append(n.roots, int32(k))
		} else {
			n.start[p+1]++
		}
	}
	for k := range n.nodes {
		n.start[k+1] += n.start[k]
	}
	n.kids = make([]int32, len(n.nodes)-len(n.roots))
	next := slices.Clone(n.start[:len(n.nodes)])
	for k, p := range n.parent {
		if p >= 0 {
			n.kids[next[p]] = int32(k)
			next[p]++
		}
	}
}

// walk visits the forest depth first, without recursion: enter is called
// on each node before its kids, leave after them.
func (n *nesting) walk(enter, leave func(k int32)) {
	type frame struct {
		k    int32
		next int32 // the next kid to visit, as an index in kids
	}
	var stack []frame
	for _, r := range n.roots {
		enter(r)
		stack = append(stack[:0], frame{r, n.start[r]})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == n.start[f.k+1] {
				leave(f.k)
				stack = stack[:len(stack)-1]
				continue
			}
			kid := n.kids[f.next]
			f.next++
			enter(kid)
			stack = append(stack, frame{kid, n.start[kid]})
		}
	}
}

// fold takes the members inside another member of their group out of the
// group's bytes, retained bytes and objects, counts them as nested, and
// makes the group's first member an outermost one.
func (n *nesting) fold(a *Analysis, members []nestMember) {
	n.folded = make([]bool, len(n.nodes))
	bytes := make([]uint64, len(n.nodes))
	for _, m := range members {
		bytes[n.index(m.v)] = m.bytes
	}
	// active counts each group's members on the path from the root to the
	// node visited, outer the outermost of them.
	type state struct {
		active int
		outer  heapdump.NodeID
	}
	groups := map[*pending]*state{}
	enter := func(k int32) {
		p := n.group[k]
		if p == nil {
			return
		}
		st := groups[p]
		if st == nil {
			st = &state{}
			groups[p] = st
		}
		st.active++
		v := n.nodes[k]
		if st.active == 1 {
			st.outer = v
			return
		}
		n.folded[k] = true
		r := a.retained[v]
		p.retained -= r
		p.objects -= a.RetainedObjects(v)
		p.bytes -= min(p.bytes, bytes[k])
		p.nested++
		if p.rep == v {
			p.rep = st.outer
		}
	}
	leave := func(k int32) {
		if p := n.group[k]; p != nil {
			groups[p].active--
		}
	}
	n.walk(enter, leave)
	if a.recordMembers {
		for p := range groups {
			p.members = slices.DeleteFunc(p.members, func(v heapdump.NodeID) bool {
				k, ok := slices.BinarySearch(n.nodes, v)
				return ok && n.folded[k]
			})
		}
	}
}

// Overlap is what a group of the report retains inside the members of
// another group, which counts it too.
type Overlap struct {
	// Group and Within are the numbers of the groups in the report, from
	// 1 as the text shows them (#1): the bytes of Group are inside the
	// members of Within.
	Group  int    `json:"group"`
	Within int    `json:"within"`
	Bytes  uint64 `json:"bytes"`
}

// overlaps returns what the groups reported, numbered from 1 by number,
// count more than once: each member of a group inside a member of another
// (the nearest such) counts for the pair.
func (n *nesting) overlaps(a *Analysis, number map[*pending]int) []Overlap {
	if n == nil {
		return nil
	}
	// Along the path from the root to the node visited: for each node, the
	// number of the nearest reported group at or above it (near), and of
	// the nearest other than that one (next).
	type nears struct{ near, next int }
	path := []nears{{}}
	by := map[[2]int]uint64{}
	enter := func(k int32) {
		g, top := number[n.group[k]], path[len(path)-1]
		if g == 0 {
			path = append(path, top)
			return
		}
		within := top.near
		if within == g {
			within = top.next
		}
		if within != 0 && !n.folded[k] {
			by[[2]int{g, within}] += a.retained[n.nodes[k]]
		}
		path = append(path, nears{g, within})
	}
	leave := func(int32) { path = path[:len(path)-1] }
	n.walk(enter, leave)
	var out []Overlap
	for k, b := range by {
		out = append(out, Overlap{Group: k[0], Within: k[1], Bytes: b})
	}
	slices.SortFunc(out, func(x, y Overlap) int {
		return cmp.Or(cmp.Compare(x.Group, y.Group), cmp.Compare(x.Within, y.Within))
	})
	return out
}
