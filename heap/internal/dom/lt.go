package dom

import "unsafe"

// New computes the dominator tree of g from root. It returns an error, and
// never panics, when g is malformed (Start decreasing or past Succ, an edge to
// a node that does not exist) or root is not one of its nodes. g is only read.
//
// The algorithm is the simple version of Lengauer and Tarjan's (path
// compression without balancing, O(m log n)), worked in depth-first preorder
// numbers: a depth-first search numbers the nodes the root reaches; one pass
// over the edges finds, for every node w, its smallest predecessor that comes
// before it, and collects the edges that go back up the numbering; a sweep in
// reverse preorder computes semidominators and relative dominators with an
// evaluation forest; a forward sweep turns them into immediate dominators.
// Nothing recurses: the search keeps its place in parent and cursor arrays, and
// path compression reverses the pointers of the path instead of keeping a
// stack. Its memory is four arrays of 4 bytes a node, reused from step to
// step, and 4 bytes an edge that goes up the numbering.
func New(g Graph, root uint32) (*Tree, error) {
	if err := g.check(root); err != nil {
		return nil, err
	}
	n := len(g.Start) - 1
	start, succ := g.Start, g.Succ

	// Four arrays of n words, each playing several parts in turn. c and d
	// are the two halves of one []uint64, which outlives New as the result of
	// the first Retained.
	a := make([]uint32, n) // preorder number; then idom by preorder; then idom by node
	b := make([]uint32, n) // order; then semi; then order again
	cd := make([]uint64, n)
	words := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(cd))), 2*n)
	c := words[:n:n] // DFS parent, then compressed ancestor; then scratch
	d := words[n:]   // DFS cursor; then counts and offsets of up edges; then label and bucket heads
	seen := newBitset(n)

	// Step 1: number the reachable nodes in depth-first preorder.
	r := dfs(start, succ, root, seen, b, c, d)
	pre := a
	for i := range pre {
		pre[i] = None
	}
	for i, v := range b[:r] {
		pre[v] = uint32(i)
	}

	// Step 2: from here on nodes are named by their preorder number. For every
	// w, semi[w] starts as the smallest predecessor numbered before w (its
	// DFS parent is one). Edges v->w with v after w are the ones Step 3 must
	// evaluate: gather them grouped by w, groups in decreasing w, in up.
	semi := b[:r]
	for i := range semi {
		semi[i] = uint32(i)
	}
	count := d[:r]
	clear(count)
	for v := range n {
		pv := pre[v]
		if pv == None {
			continue
		}
		for _, w := range succ[start[v]:start[v+1]] {
			pw := pre[w]
			if pv < pw {
				if pv < semi[pw] {
					semi[pw] = pv
				}
			} else if pv > pw && pw != 0 {
				count[pw]++
			}
		}
	}
	hasUp := newBitset(r)
	total := 0
	for w := r - 1; w >= 1; w-- {
		if k := count[w]; k != 0 {
			hasUp.set(uint32(w))
			count[w] = uint32(total)
			total += int(k)
		}
	}
	up := make([]uint32, total)
	for v := range n {
		pv := pre[v]
		if pv == None {
			continue
		}
		for _, w := range succ[start[v]:start[v+1]] {
			if pw := pre[w]; pv > pw && pw != 0 {
				up[count[pw]] = pv
				count[pw]++
			}
		}
	}
	for w := 1; w < r; w++ {
		if hasUp.has(uint32(w)) {
			up[count[w]-1] |= lastUp // count[w] is now the end of w's group
		}
	}

	// Step 3: in reverse preorder, compute the semidominator of w, put w in
	// the bucket of its semidominator, link w to its parent, and give every
	// node in the bucket of the parent its relative dominator. Linking is
	// implicit: the nodes numbered last or after are in the forest. A node's
	// label slot holds its bucket head until the node is processed, when its
	// bucket is empty for good; its idom slot holds the next node in its bucket
	// until it leaves the bucket and gets its relative dominator.
	anc := c[:r] // the DFS parent until compressed
	lab := d[:r]
	for i := range lab {
		lab[i] = None
	}
	idom := a[:r]
	k := 0
	for w := uint32(r - 1); w >= 1; w-- {
		if hasUp.has(w) {
			s := semi[w]
			for {
				x := up[k]
				k++
				if u := semi[eval(anc, lab, semi, x&^lastUp, w+1)]; u < s {
					s = u
				}
				if x&lastUp != 0 {
					break
				}
			}
			semi[w] = s
		}
		s := semi[w]
		idom[w] = lab[s]
		lab[s] = w
		lab[w] = w
		p := anc[w]
		for v := lab[p]; v != None; {
			next := idom[v]
			if u := eval(anc, lab, semi, v, w); semi[u] < semi[v] {
				idom[v] = u
			} else {
				idom[v] = p
			}
			v = next
		}
		lab[p] = None
	}

	// Step 4: in preorder, a relative dominator that is not the
	// semidominator has the same immediate dominator as the node.
	idom[0] = 0
	for w := 1; w < r; w++ {
		if idom[w] != semi[w] {
			idom[w] = idom[idom[w]]
		}
	}

	// Step 5: the order went to semi; search again, the same way, to get it
	// back, then turn idom from preorder numbers into nodes.
	seen.clearAll()
	if dfs(start, succ, root, seen, b, c, d) != r {
		panic("dom: second depth-first search disagrees with the first")
	}
	order := b[:r:r]
	byNum := c[:r]
	copy(byNum, idom)
	out := a
	for i := range out {
		out[i] = None
	}
	for i, v := range order {
		out[v] = order[byNum[i]]
	}

	t := &Tree{root: root, idom: out, order: order}
	t.spare.Store(&cd)
	return t, nil
}

// lastUp marks the last edge of a node's group in up. Preorder numbers are
// below MaxNodes, so their top bit is free.
const lastUp = 1 << 31

// dfs numbers the nodes that root reaches in depth-first preorder: order[i] is
// the node numbered i, parent[i] the number of its parent in the search tree.
// It does not recurse: cursor[i] keeps the place in the edges of node i while
// the search is below it. seen must be clear; dfs marks what it visits. It
// returns the number of nodes visited.
func dfs(start, succ []uint32, root uint32, seen bitset, order, parent, cursor []uint32) int {
	seen.set(root)
	order[0] = root
	parent[0] = None
	n := 1
	cur := uint32(0)
	e, end := start[root], start[root+1]
	for {
		for e < end {
			w := succ[e]
			e++
			if seen.has(w) {
				continue
			}
			seen.set(w)
			cursor[cur] = e
			order[n] = w
			parent[n] = cur
			cur = uint32(n)
			n++
			e, end = start[w], start[w+1]
		}
		if cur == 0 {
			return n
		}
		cur = parent[cur]
		e, end = cursor[cur], start[order[cur]+1]
	}
}

// eval returns the node with the smallest semidominator on the forest path
// from v up to, and not including, the first node that is not linked (numbered
// below last), and compresses the path: every node on it but the top one gets
// that unlinked node as ancestor, and as label the node with the smallest
// semidominator between it and the top. v must be linked. Instead of a stack,
// the walk up reverses the ancestor links and the walk down restores them.
func eval(anc, lab, semi []uint32, v, last uint32) uint32 {
	a := anc[v]
	if a < last {
		return lab[v]
	}
	prev, x := None, v
	for a >= last {
		anc[x] = prev
		prev, x = x, a
		a = anc[x]
	}
	best := lab[x]
	for y := prev; y != None; {
		below := anc[y]
		anc[y] = a
		if l := lab[y]; semi[best] < semi[l] {
			lab[y] = best
		} else {
			best = l
		}
		y = below
	}
	return best
}

// bitset is a set of small integers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (s bitset) has(i uint32) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s bitset) set(i uint32)      { s[i/64] |= 1 << (i % 64) }
func (s bitset) clearAll()         { clear(s) }
