// Package dom computes the dominator tree of a large directed graph, and the
// retained sizes that follow from it.
//
// A node d dominates a node v when every path from the root to v passes
// through d. The immediate dominator of v is the dominator of v closest to it;
// the immediate dominators form a tree rooted at the root. In a heap graph
// whose root links to every GC root, the dominator subtree of an object is
// exactly what would be freed if that object became unreachable, and the sum
// of the sizes in it is the object's retained size.
//
// The package is built for heap graphs of tens of millions of nodes: New
// reads any Input that gives a node's successors as a slice (a Graph, in
// compressed sparse row form, or heap's graph with its own node type),
// recurses nowhere (a linked list of millions of nodes is fine), allocates
// nothing per node, and runs in
// O(m log n) time. Its memory is 20 bytes a node, which end up holding its
// results: the immediate dominators and the preorder, and then the first
// results of Retained and RetainedObjects, which a Tree keeps for them until
// they are asked for; plus, while New runs, a bit a node and 4 bytes a
// non-tree edge (12 when there are more than half as many non-tree edges
// as nodes).
package dom

import (
	"errors"
	"fmt"
	"iter"
	"sort"
	"sync"
	"sync/atomic"
)

// None is the immediate dominator of a node that the root does not reach.
const None = ^uint32(0)

// MaxNodes is the largest number of nodes New accepts.
const MaxNodes = 1<<31 - 1

// Input is a directed graph as New reads it: nodes 0 to Len()-1 of a type
// N, each with its successors. Self edges, duplicate edges and nodes
// unreachable from the root are fine. Graph is one; a heap graph is
// another.
type Input[N ~uint32] interface {
	Len() int
	// Succs returns the successors of v, which New does not modify.
	Succs(v N) []N
}

// CSR is an Input whose successors lie in two arrays, as a Graph's do:
// those of v are succ[start[v]:start[v+1]]. New's search reads them there
// rather than calling Succs for every node, and checks each range it
// reads: a range out of order or past succ is an error, as for any Input.
type CSR[N ~uint32] interface {
	Input[N]
	CSR() (start []uint32, succ []N)
}

// Graph is a directed graph in compressed sparse row form. Its nodes are
// 0 to Len()-1; the successors of node v are Succ[Start[v]:Start[v+1]].
// Self edges, duplicate edges and nodes unreachable from the root are fine.
type Graph struct {
	Start []uint32 // one more than there are nodes, non-decreasing
	Succ  []uint32
}

// Len returns the number of nodes of g.
func (g Graph) Len() int {
	if len(g.Start) == 0 {
		return 0
	}
	return len(g.Start) - 1
}

// Succs returns the successors of v. The caller must not modify them.
func (g Graph) Succs(v uint32) []uint32 {
	return g.Succ[g.Start[v]:g.Start[v+1]]
}

// CSR returns g.Start and g.Succ.
func (g Graph) CSR() ([]uint32, []uint32) { return g.Start, g.Succ }

// check reports whether g is well formed and root is one of its nodes, so that
// the algorithm can index every array without further checks. A Graph is
// checked whole; the edges of any other input are checked by the search, as
// it reads them, which spares a pass over the graph.
func check[N ~uint32](in Input[N], root N) error {
	if g, ok := any(in).(Graph); ok {
		return g.check(uint32(root))
	}
	n := in.Len()
	if n <= 0 {
		return errors.New("dom: graph has no nodes")
	}
	if n > MaxNodes {
		return fmt.Errorf("dom: graph has %d nodes, more than the %d supported", n, MaxNodes)
	}
	if int64(root) >= int64(n) {
		return fmt.Errorf("dom: root %d is not a node of a graph of %d nodes", root, n)
	}
	return nil
}

// check is check for a graph in compressed sparse row form, whose Succs
// would panic before the edges could be checked.
func (g Graph) check(root uint32) error {
	if len(g.Start) == 0 {
		return errors.New("dom: graph has no nodes (empty Start)")
	}
	n := len(g.Start) - 1
	if n > MaxNodes {
		return fmt.Errorf("dom: graph has %d nodes, more than the %d supported", n, MaxNodes)
	}
	if int64(root) >= int64(n) {
		return fmt.Errorf("dom: root %d is not a node of a graph of %d nodes", root, n)
	}
	for v := range n {
		if g.Start[v] > g.Start[v+1] {
			return fmt.Errorf("dom: Start[%d] = %d is past Start[%d] = %d", v, g.Start[v], v+1, g.Start[v+1])
		}
	}
	if int64(g.Start[n]) > int64(len(g.Succ)) {
		return fmt.Errorf("dom: Start[%d] = %d is past the %d edges in Succ", n, g.Start[n], len(g.Succ))
	}
	first := g.Start[0]
	for i, w := range g.Succ[first:g.Start[n]] {
		if w >= uint32(n) {
			e := first + uint32(i)
			v := sort.Search(n, func(v int) bool { return g.Start[v+1] > e })
			return fmt.Errorf("dom: edge Succ[%d] from node %d points to node %d, past the last node %d", e, v, w, n-1)
		}
	}
	return nil
}

// Tree is the dominator tree of a graph, computed by New. Its methods may be
// called concurrently.
type Tree struct {
	root  uint32
	idom  []uint32 // by node; None for unreachable nodes
	order []uint32 // reachable nodes in depth-first preorder from root

	// spare and spareObjects are work memory of New, handed to the first
	// calls to Retained and RetainedObjects (or RetainedFillObjects) as
	// their results.
	spare        atomic.Pointer[[]uint64]
	spareObjects atomic.Pointer[[]uint32]
	// rootKids is what KeepRootKids kept, until TakeRootKids, which waits
	// for rootKidsDone: New returns before their predecessors are all in.
	rootKids     atomic.Pointer[RootKids]
	rootKidsDone sync.WaitGroup
	// idomNumbers is PreorderIdoms, in spareObjects, until RetainedObjects
	// or RetainedFillObjects takes that.
	idomNumbers atomic.Pointer[[]uint32]
}

// Len returns the number of nodes of the graph, reachable or not.
func (t *Tree) Len() int { return len(t.idom) }

// Root returns the root the tree was computed from.
func (t *Tree) Root() uint32 { return t.root }

// Idom returns the immediate dominator of v: the root for the root itself,
// None for a node that the root does not reach.
func (t *Tree) Idom(v uint32) uint32 { return t.idom[v] }

// Reachable reports whether the root reaches v.
func (t *Tree) Reachable(v uint32) bool { return t.idom[v] != None }

// Preorder returns the nodes the root reaches, in the depth-first preorder New
// visited them: the root first, and every node after its immediate dominator.
// Its length is the number of reachable nodes. The caller must not modify it.
func (t *Tree) Preorder() []uint32 { return t.order }

// PreorderIdoms returns, for each node of Preorder, the position in
// Preorder of its immediate dominator (0 for the root itself): the tree
// read in preorder without looking nodes up. It returns nil once
// RetainedObjects or RetainedFillObjects has been called, whose result
// takes that memory. The caller must not modify it, nor call either while
// it reads it.
func (t *Tree) PreorderIdoms() []uint32 {
	if p := t.idomNumbers.Load(); p != nil {
		return *p
	}
	return nil
}

// Chain returns the dominators of v, from v itself up through its immediate
// dominator, that one's, and so on, to the root. It yields nothing for a node
// that the root does not reach.
func (t *Tree) Chain(v uint32) iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		if t.idom[v] == None {
			return
		}
		for {
			if !yield(v) || v == t.root {
				return
			}
			v = t.idom[v]
		}
	}
}

// Dominates reports whether a dominates b: whether a is on the chain of b.
// Every reachable node dominates itself. It takes time proportional to the
// depth of b in the tree.
func (t *Tree) Dominates(a, b uint32) bool {
	for d := range t.Chain(b) {
		if d == a {
			return true
		}
	}
	return false
}

// Children returns the dominator tree itself as a Graph over the same nodes:
// the successors of v are the nodes v immediately dominates, in preorder.
// Unreachable nodes have none, and no node has them. It builds the graph on
// each call, in 4 bytes a node plus 4 a reachable node.
func (t *Tree) Children() Graph {
	n := len(t.idom)
	// Count the children of p in start[p+2], turn the counts into ends by a
	// running sum, so that start[p+1] is where the children of p begin; then
	// placing each child at start[p+1]++ leaves start[p+1] at the end of p,
	// where p+1 begins.
	start := make([]uint32, n+2)
	for _, v := range t.order[1:] {
		start[t.idom[v]+2]++
	}
	for i := 2; i < len(start); i++ {
		start[i] += start[i-1]
	}
	kids := make([]uint32, len(t.order)-1)
	for _, v := range t.order[1:] {
		p := t.idom[v]
		kids[start[p+1]] = v
		start[p+1]++
	}
	return Graph{Start: start[:n+1], Succ: kids}
}

// Retained returns the retained size of every node: the sum of sizes[u] over
// the nodes u that v dominates, v included. That is what would become
// unreachable if v did. It is 0 for nodes that the root does not reach.
// len(sizes) must be t.Len(). The first call on a tree returns the work memory
// of New, so the tree and its retained sizes together cost no more than New.
func Retained[S ~uint32 | ~uint64](t *Tree, sizes []S) []uint64 {
	if len(sizes) != len(t.idom) {
		panic(fmt.Sprintf("dom.Retained: %d sizes for a tree of %d nodes", len(sizes), len(t.idom)))
	}
	return RetainedFill(t, func(dst []uint64) {
		for v, s := range sizes {
			dst[v] = uint64(s)
		}
	})
}

// RetainedFill is Retained with the sizes written by fill straight into the
// array it returns, which spares the caller an array of sizes: fill gets
// that array, of t.Len() elements, and must set the size of every node v
// the root reaches in its element v. The others may be left as they are.
func RetainedFill(t *Tree, fill func(dst []uint64)) []uint64 {
	ret := t.sizesArray()
	fill(ret)
	for v, d := range t.idom {
		if d == None {
			ret[v] = 0
		}
	}
	sumUp(t, ret)
	return ret
}

// sizesArray returns the array for RetainedFill: New's work memory the
// first time.
func (t *Tree) sizesArray() []uint64 {
	if p := t.spare.Swap(nil); p != nil {
		t.rootKidsDone.Wait() // it ranks the kids in there first
		return *p
	}
	return make([]uint64, len(t.idom))
}

// RetainedObjects returns the number of nodes every node retains: the size of
// its dominator subtree, itself included; 0 for nodes the root does not reach.
func (t *Tree) RetainedObjects() []uint32 {
	ret := t.objectsArray()
	for v, d := range t.idom {
		if d != None {
			ret[v] = 1
		} else {
			ret[v] = 0
		}
	}
	sumUp(t, ret)
	return ret
}

// objectsArray returns the array for RetainedObjects: New's work memory
// the first time.
func (t *Tree) objectsArray() []uint32 {
	if p := t.spareObjects.Swap(nil); p != nil {
		t.idomNumbers.Store(nil)
		t.rootKidsDone.Wait() // it reads the idoms by number in there first
		return *p
	}
	return make([]uint32, len(t.idom))
}

// RetainedFillObjects returns what RetainedFill and RetainedObjects do, in
// one pass up the tree rather than two.
func RetainedFillObjects(t *Tree, fill func(dst []uint64)) ([]uint64, []uint32) {
	ret, objs := t.sizesArray(), t.objectsArray()
	fill(ret)
	for v, d := range t.idom {
		if d == None {
			ret[v], objs[v] = 0, 0
		} else {
			objs[v] = 1
		}
	}
	idom, order := t.idom, t.order
	for i := len(order) - 1; i >= 1; i-- {
		v := order[i]
		d := idom[v]
		ret[d] += ret[v]
		objs[d] += objs[v]
	}
	return ret, objs
}

// sumUp adds the value of every node but the root to that of its immediate
// dominator, children before parents: reverse preorder does that, since a
// node's dominators all come before it in preorder.
func sumUp[T uint32 | uint64](t *Tree, ret []T) {
	idom, order := t.idom, t.order
	for i := len(order) - 1; i >= 1; i-- {
		v := order[i]
		ret[idom[v]] += ret[v]
	}
}
