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

// nestMember is a member that can be inside another, or a member another
// is inside: its node, its group and what it counts towards MinSize there.
type nestMember struct {
	v heapdump.NodeID
	// up is the nearest member above v: its node while nest finds them,
	// then its index in nesting.members; noUp for none.
	up     uint32
	group  int32 // an index in nesting.groups, -1 for none (the runtime's)
	folded bool  // inside another member of its group
	bytes  uint64
}

// noUp is the up of a member no other member is above.
const noUp = ^uint32(0)

// nesting is the forest of the members that are inside another member and
// of those they are inside: each one's nearest member above it.
type nesting struct {
	members []nestMember // sorted by node
	groups  []*pending   // by index (pending.id)
	// kids lists each member's kids, kids[start[i]:start[i+1]]: the
	// forest read top down, from the members with no up.
	start, kids []int32
}

// nest finds, for each of members (large objects and the holdings of
// timers and runtime.g, of groups groups by index), sorted by node, the nearest member
// above it, folds the members inside another member of their group into
// it (see above), and returns the forest for the report's overlap. lookup
// returns the group of a holding top that is not one of members, nil for
// none.
func (a *Analysis) nest(members []nestMember, groups []*pending, large []heapdump.NodeID, lookup func(heapdump.NodeID) *pending) *nesting {
	n := &nesting{members: members, groups: groups}
	known := map[heapdump.NodeID]heapdump.NodeID{} // the nearest member above each node walked
	var walked, extra []heapdump.NodeID
	for i := range members {
		m := &members[i]
		u := a.memberAbove(m.v, large, known, &walked)
		m.up = noUp
		if u == heapdump.NoNode {
			continue
		}
		m.up = uint32(u)
		if _, ok := n.index(u); !ok {
			extra = append(extra, u) // a holding's top above a member
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		var tops []nestMember
		for _, u := range slices.Compact(extra) {
			g := int32(-1)
			if p := lookup(u); p != nil {
				g = p.id
			}
			tops = append(tops, nestMember{v: u, up: noUp, group: g})
		}
		n.members = mergeMembers(n.members, tops)
	}
	for i := range n.members {
		if m := &n.members[i]; m.up != noUp {
			k, _ := n.index(heapdump.NodeID(m.up))
			m.up = uint32(k)
		}
	}
	n.link()
	n.fold(a)
	return n
}

// mergeMembers returns the members of x and y, both sorted by node, in a
// new slice sorted by node.
func mergeMembers(x, y []nestMember) []nestMember {
	out := make([]nestMember, 0, len(x)+len(y))
	for len(x) > 0 && len(y) > 0 {
		if x[0].v <= y[0].v {
			out, x = append(out, x[0]), x[1:]
		} else {
			out, y = append(out, y[0]), y[1:]
		}
	}
	return append(append(out, x...), y...)
}

// index returns the index of member v, and whether it is one.
func (n *nesting) index(v heapdump.NodeID) (int, bool) {
	return slices.BinarySearchFunc(n.members, v, func(m nestMember, v heapdump.NodeID) int { return cmp.Compare(m.v, v) })
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

// link lists the kids of each member.
func (n *nesting) link() {
	n.start = make([]int32, len(n.members)+1)
	roots := 0
	for _, m := range n.members {
		if m.up == noUp {
			roots++
		} else {
			n.start[m.up+1]++
		}
	}
	for k := range n.members {
		n.start[k+1] += n.start[k]
	}
	n.kids = make([]int32, len(n.members)-roots)
	next := slices.Clone(n.start[:len(n.members)])
	for k, m := range n.members {
		if m.up != noUp {
			n.kids[next[m.up]] = int32(k)
			next[m.up]++
		}
	}
}

// walk visits the forest depth first, without recursion: enter is called
// on each member before its kids, leave after them.
func (n *nesting) walk(enter, leave func(k int32)) {
	type frame struct {
		k    int32
		next int32 // the next kid to visit, as an index in kids
	}
	var stack []frame
	for r, m := range n.members {
		if m.up != noUp {
			continue
		}
		enter(int32(r))
		stack = append(stack[:0], frame{int32(r), n.start[r]})
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
func (n *nesting) fold(a *Analysis) {
	// active counts each group's members on the path from the root to the
	// member visited, outer is the outermost of them.
	active := make([]int32, len(n.groups))
	outer := make([]heapdump.NodeID, len(n.groups))
	folded := false
	enter := func(k int32) {
		m := &n.members[k]
		if m.group < 0 {
			return
		}
		active[m.group]++
		if active[m.group] == 1 {
			outer[m.group] = m.v
			return
		}
		p := n.groups[m.group]
		m.folded, folded = true, true
		p.retained -= a.retained[m.v]
		p.objects -= a.RetainedObjects(m.v)
		p.bytes -= min(p.bytes, m.bytes)
		p.nested++
		if p.rep == m.v {
			p.rep = outer[m.group]
		}
	}
	leave := func(k int32) {
		if g := n.members[k].group; g >= 0 {
			active[g]--
		}
	}
	n.walk(enter, leave)
	if folded && a.recordMembers {
		for _, p := range n.groups {
			p.members = slices.DeleteFunc(p.members, func(v heapdump.NodeID) bool {
				k, ok := n.index(v)
				return ok && n.members[k].folded
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
	if n == nil || len(number) < 2 {
		return nil
	}
	numbers := make([]int, len(n.groups)) // by group index
	for i, p := range n.groups {
		for p.into != nil { // folded into a mechanism's group
			p = p.into
		}
		numbers[i] = number[p]
	}
	// Along the path from the root to the node visited: for each node, the
	// number of the nearest reported group at or above it (near), and of
	// the nearest other than that one (next).
	type nears struct{ near, next int }
	path := []nears{{}}
	by := map[[2]int]uint64{}
	enter := func(k int32) {
		m, top := &n.members[k], path[len(path)-1]
		g := 0
		if m.group >= 0 {
			g = numbers[m.group]
		}
		if g == 0 {
			path = append(path, top)
			return
		}
		within := top.near
		if within == g {
			within = top.next
		}
		if within != 0 && !m.folded {
			by[[2]int{g, within}] += a.retained[m.v]
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
