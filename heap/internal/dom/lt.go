package dom

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/ctxleak/ctxleak/internal/bigarray"
)

// New computes the dominator tree of g from root. It returns an error, and
// never panics, when g is malformed (an edge to a node that does not exist:
// in a Graph, anywhere, and Start decreasing or past Succ; in any other
// Input, from a node root reaches, the only ones New reads) or root is not
// one of its nodes. g is only read.
//
// The algorithm is the simple version of Lengauer and Tarjan's (path
// compression without balancing, O(m log n)), worked in depth-first preorder
// numbers. A depth-first search numbers the nodes the root reaches and
// collects the edges that are not tree edges, which a radix sort groups by
// target; a sweep in reverse preorder computes semidominators and relative
// dominators with an evaluation forest; a forward sweep turns them into
// immediate dominators. Nothing recurses: the search keeps its place in
// parent and cursor arrays, and path compression reverses the pointers of the
// path instead of keeping a stack. Its memory is 20 bytes a node, reused from
// step to step and then by the results of New, Retained and RetainedObjects,
// a bit a node while it searches, and 4 bytes a non-tree edge (12 when there
// are more than half as many non-tree edges as nodes).
func New[N ~uint32](g Input[N], root N, opts ...Option) (*Tree, error) {
	keep := false
	for _, o := range opts {
		keep = keep || o == KeepRootKids
	}
	if err := check(g, root); err != nil {
		return nil, err
	}
	n := g.Len()

	// Five arrays of n words, each playing several parts in turn. c and d are
	// the two halves of one []uint64, kept for the first Retained to return;
	// b is kept for the first RetainedObjects.
	ab := make([]uint64, n)
	a, b := halves(ab)
	// a: preorder number of each node; then, with b, ancestors and labels
	// side by side (Step 2); then idom of each node
	// b: idoms, by number (after Step 3)
	cd := make([]uint64, n)
	c, d := halves(cd)
	// c: DFS parent
	// d: DFS cursor; then, with c, semidominators and relative dominators
	// side by side (Step 2)
	e := make([]uint32, n) // node of each number (the preorder)
	// The search fills a, e, c and d as it numbers nodes, one core's work;
	// the first touch of fresh memory is the kernel clearing it. Another
	// goroutine has the kernel do that on the idle core, from the end of
	// the arrays, which the search reaches last, then b for Step 2.
	if n >= populateMin {
		populated := make(chan struct{})
		go func() {
			defer close(populated)
			const parts = 32
			for i := parts - 1; i >= 0; i-- {
				for _, s := range [][]uint32{a, e, c, d} {
					bigarray.Populate(s[i*len(s)/parts : (i+1)*len(s)/parts])
				}
			}
			bigarray.Populate(b)
		}()
		defer func() { <-populated }()
	}

	// Step 1: number the nodes the root reaches in depth-first preorder, and
	// collect the edges that are not tree edges, sorted by target. From here
	// on nodes are named by their number. A small graph's numbers stay in
	// the cache, so the search reads a target's number as it meets the edge;
	// in a large one that read would miss on most edges, so the search keeps
	// the target's node and groupByTarget reads the numbers in node order.
	var in edges
	numbered := n <= numberedMaxNodes
	r, err := search(g, uint32(root), a, e, c, d, &in, numbered)
	if err != nil {
		return nil, err
	}
	order := e[:r:r]
	// b and d are free until Step 2, a once groupByTarget has read it.
	if !numbered {
		numberNodes(a, order, groupWorkers(in.n))
	}
	hasIn := in.groupByTarget(r, a, ab, cd[(n+1)/2:], numbered)
	var parent []uint32 // of each target of non-tree edges, for KeepRootKids
	if keep {
		parent = make([]uint32, hasIn.count())
	}
	pg := len(parent)

	// Step 2: in reverse preorder, compute the semidominator of w, put w in
	// the bucket of its semidominator, link w to its parent, and give every
	// node in the bucket of the parent its relative dominator. Linking is
	// implicit: the nodes numbered last or after are in the forest. A node's
	// label slot holds its bucket head until the node is processed, when its
	// bucket is empty for good; its idom slot holds the next node in its
	// bucket until it leaves the bucket and gets its relative dominator.
	// A node whose one edge in is the tree edge (no non-tree edges: most
	// objects, and the list nodes of heapgen's dumps that its map does
	// not also point to) skips the bucket: its parent is its
	// semidominator and its relative dominator at once.
	// The four words of a number are read together, at random: they are
	// kept side by side, the ancestor and label in ab (al), the
	// semidominator and idom in cd (si), so that a number costs two cache
	// misses rather than four.
	al, si := pairs(ab)[:r], pairs(cd)[:r]
	for w := range al {
		al[w] = pair{c[w], None} // the DFS parent until compressed; c is in cd
	}
	k := in.n - 1
	for w := uint32(r - 1); w >= 1; w-- {
		s := al[w].x // the parent is a predecessor numbered before w
		hi := hasIn.has(w)
		if keep && hi {
			pg--
			parent[pg] = s
		}
		for more := hi; more; k-- {
			x := in.at(k)
			more = x&mark == 0
			if v := x &^ mark; v < w {
				s = min(s, v)
			} else if u := si[eval(al, si, v, w+1)].x; u < s {
				s = u
			}
		}
		al[w].y = w
		p := al[w].x
		if hi {
			si[w].x = s
			si[w].y = al[s].y
			al[s].y = w
		} else {
			si[w] = pair{p, p} // its one edge in is the tree edge
		}
		for v := al[p].y; v != None; {
			next := si[v].y
			u := al[v].y // eval(v) when v is linked to an unlinked node, as most are
			if al[v].x >= w {
				u = eval(al, si, v, w)
			}
			if si[u].x < si[v].x {
				si[v].y = u
			} else {
				si[v].y = p
			}
			v = next
		}
		al[p].y = None
	}

	// Step 3: in preorder, a relative dominator that is not the
	// semidominator has the same immediate dominator as the node. The
	// idoms go to b as they are found, by number, ab's second half, free
	// with al.
	idom := b[:r]
	si[0].y, idom[0] = 0, 0
	for w := 1; w < r; w++ {
		d := si[w].y
		if d != si[w].x {
			d = si[d].y
			si[w].y = d
		}
		idom[w] = d
	}

	// The kids of the root, if kept, are known from idom now. Their
	// predecessors are collected on another core while this one and the
	// caller go on: that reads only order, idom (in b), in and parent,
	// which nothing writes any more until RetainedObjects (or
	// RetainedFillObjects), and ranks the kids in c, free after Step 3
	// until Retained; both wait for it (as TakeRootKids does).
	t := &Tree{root: uint32(root), order: order}
	if keep {
		kids := newRootKids(n, idom, order)
		t.rootKids.Store(kids)
		in, parent := in, parent
		t.rootKidsDone.Go(func() { kids.collectPreds(order, idom, in, hasIn, parent, c) })
	}

	// Step 4: back from numbers to nodes.
	out := a
	for i := range out {
		out[i] = None
	}
	for i, v := range order {
		out[v] = order[idom[i]]
	}
	t.idom = out
	t.spare.Store(&cd)
	t.spareObjects.Store(&b)
	t.idomNumbers.Store(&idom)
	return t, nil
}

// populateMin is the number of nodes from which New populates its arrays
// on another goroutine; tests lower it.
var populateMin = defaultPopulateMin

const defaultPopulateMin = 1 << 20

// numberNodes writes the number of each node of order in pre, on k cores:
// the search leaves that to it in a big graph, whose pre it would write at
// random on one core.
func numberNodes(pre, order []uint32, k int) {
	parallel(k, func(w int) {
		lo, hi := w*len(order)/k, (w+1)*len(order)/k
		for i, v := range order[lo:hi] {
			pre[v] = uint32(lo + i)
		}
	})
}

// numberedMaxNodes is the number of nodes up to which the search puts the
// targets of non-tree edges in edges as numbers, and groupByTarget sorts
// them on one core: up to it, an array of a number a node (4 MiB) is read
// at random faster than the edges are put in node order first, and the
// sort is too short to gain from more cores. Tests change it.
var numberedMaxNodes = 1 << 20

// search numbers the nodes that root reaches in depth-first preorder: pre[v]
// is the number of node v, left as it was if root does not reach it (no
// one reads it); order[i] is the node numbered i and parent[i] the number
// of its parent in the search tree. Every edge v->w that is not a tree
// edge, a self edge or an edge into the root goes into in (see edges), w as
// its number if numbered, else as a node, whose number groupByTarget
// reads. It does not recurse: cursor[i] keeps the place in the successors
// of node i while the search is below it, and a small cache keeps the
// successors of the nodes most recently left, so that most returns to a
// node do not ask g again. It returns the number of nodes numbered, or an
// error for an edge to a node past the last.
func search[N ~uint32](g Input[N], root uint32, pre, order, parent, cursor []uint32, in *edges, numbered bool) (int, error) {
	last := uint32(len(pre) - 1)
	// A CSR's successors are read from its arrays, not through a call.
	var start []uint32
	var all []N
	direct := false
	if c, ok := g.(CSR[N]); ok {
		start, all = c.CSR()
		direct = len(start) == len(pre)+1
	}
	succsOf := func(v uint32) ([]N, error) {
		if !direct {
			return g.Succs(N(v)), nil
		}
		s, e := start[v], start[v+1]
		if s > e || int(e) > len(all) {
			return nil, fmt.Errorf("dom: the successors of node %d lie at [%d, %d), not within the %d edges", v, s, e, len(all))
		}
		return all[s:e:e], nil
	}
	// left[i%len(left)] holds the successors of node number i while the
	// search is below it, unless a later number took the place.
	var left [256]struct {
		succ []N
		num  uint32
	}
	// seen marks the nodes numbered: a set of n bits stays in the cache
	// where pre, 32 times larger, would miss on most edges.
	seen := newBitset(len(pre))
	seen.set(root)
	pre[root] = 0
	order[0] = root
	parent[0] = None
	n := uint32(1)
	cur, src, node := uint32(0), None, root
	succ, err := succsOf(root)
	if err != nil {
		return 0, err
	}
	e := 0
	for {
		for e < len(succ) {
			w := uint32(succ[e])
			e++
			if w > last {
				return 0, fmt.Errorf("dom: an edge from node %d points to node %d, past the last node %d", node, w, last)
			}
			if !seen.has(w) {
				seen.set(w)
				if numbered {
					pre[w] = n // else numberNodes writes it
				}
				order[n] = w
				parent[n] = cur
				ws, err := succsOf(w)
				if err != nil {
					return 0, err
				}
				if len(ws) == 0 { // a leaf: nothing to search below it
					n++
					continue
				}
				if e == len(succ) {
					cursor[cur] = None // nothing left: the return skips it
				} else {
					cursor[cur] = uint32(e)
					c := &left[cur%uint32(len(left))]
					c.succ, c.num = succ, cur
				}
				cur, node = n, w
				n++
				succ, e = ws, 0
				continue
			}
			if w != node && w != root {
				if cur != src {
					in.add(cur | mark)
					src = cur
				}
				if numbered {
					in.add(pre[w])
				} else {
					in.add(w)
				}
			}
		}
		for {
			if cur == 0 {
				return int(n), nil
			}
			if cur = parent[cur]; cursor[cur] != None {
				break
			}
		}
		node = order[cur]
		if c := &left[cur%uint32(len(left))]; c.num == cur && c.succ != nil {
			succ = c.succ
		} else if succ, err = succsOf(node); err != nil {
			return 0, err
		}
		e = int(cursor[cur])
	}
}

// edges holds the edges that are not tree edges, in chunks so that it grows
// without copying or slack. The search adds them as a sequence of words: a
// source number with mark set, then the targets of its edges (numbers or
// nodes, see search), then another source and so on; groupByTarget turns
// that into the source numbers only, sorted by target number, the first of
// each target's group with mark set.
type edges struct {
	chunks [][]uint32
	n      int
}

// mark flags a word in edges. Numbers and nodes are at most MaxNodes, so
// their top bit is free.
const mark = 1 << 31

const (
	chunkBits = 16
	chunkMask = 1<<chunkBits - 1
)

func (l *edges) add(x uint32) {
	if l.n>>chunkBits == len(l.chunks) {
		l.chunks = append(l.chunks, make([]uint32, 1<<chunkBits))
	}
	l.chunks[l.n>>chunkBits][l.n&chunkMask] = x
	l.n++
}

func (l *edges) at(i int) uint32     { return l.chunks[i>>chunkBits][i&chunkMask] }
func (l *edges) set(i int, x uint32) { l.chunks[i>>chunkBits][i&chunkMask] = x }

// groupStart returns the index of the first edge of group g of l, once
// grouped by target (groupByTarget), or l.n if there are no more groups.
func (l *edges) groupStart(g int) int {
	seen := 0
	for i := range l.n {
		if l.at(i)&mark != 0 {
			if seen == g {
				return i
			}
			seen++
		}
	}
	return l.n
}

// groupEnd returns the index after the last edge of the group that starts
// at edge i of l, once grouped by target.
func (l *edges) groupEnd(i int) int {
	for i++; i < l.n && l.at(i)&mark == 0; i++ {
	}
	return i
}

// eval returns the node with the smallest semidominator on the forest path
// from v up to, and not including, the first node that is not linked (numbered
// below last), and compresses the path: every node on it but the top one gets
// that unlinked node as ancestor, and as label the node with the smallest
// semidominator between it and the top. v must be linked. al holds each
// number's ancestor (x) and label (y), si its semidominator (x). Instead
// of a stack, the walk up reverses the ancestor links and the walk down
// restores them.
func eval(al, si []pair, v, last uint32) uint32 {
	a := al[v].x
	if a < last {
		return al[v].y
	}
	prev, x := None, v
	for a >= last {
		al[x].x = prev
		prev, x = x, a
		a = al[x].x
	}
	best := al[x].y
	for y := prev; y != None; {
		below := al[y].x
		al[y].x = a
		if l := al[y].y; si[best].x < si[l].x {
			al[y].y = best
		} else {
			best = l
		}
		y = below
	}
	return best
}

// pair is two words of a number, side by side.
type pair struct{ x, y uint32 }

// pairs returns the memory of s as an array of len(s) pairs.
func pairs(s []uint64) []pair {
	return unsafe.Slice((*pair)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// halves returns the two halves of s as arrays of len(s) uint32 each.
func halves(s []uint64) (lo, hi []uint32) {
	n := len(s)
	w := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s))), 2*n)
	return w[:n:n], w[n:]
}

// bitset is a set of small integers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (s bitset) has(i uint32) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s bitset) set(i uint32)      { s[i/64] |= 1 << (i % 64) }

// countBelow returns the number of members of s below n.
func (s bitset) countBelow(n int) int {
	c := 0
	for _, w := range s[:n/64] {
		c += bits.OnesCount64(w)
	}
	if n%64 != 0 {
		c += bits.OnesCount64(s[n/64] & (1<<(n%64) - 1))
	}
	return c
}

// count returns the number of elements of s.
func (s bitset) count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}
