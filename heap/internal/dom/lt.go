package dom

import (
	"math/bits"
	"unsafe"
)

// New computes the dominator tree of g from root. It returns an error, and
// never panics, when g is malformed (Start decreasing or past Succ, an edge to
// a node that does not exist) or root is not one of its nodes. g is only read.
//
// The algorithm is the simple version of Lengauer and Tarjan's (path
// compression without balancing, O(m log n)), worked in depth-first preorder
// numbers. A depth-first search numbers the nodes the root reaches and
// collects the edges that are not tree edges, which a radix sort groups by
// target; a sweep in reverse
// preorder computes semidominators and relative dominators with an evaluation
// forest; a forward sweep turns them into immediate dominators. Nothing
// recurses: the search keeps its place in parent and cursor arrays, and path
// compression reverses the pointers of the path instead of keeping a stack.
// Its memory is 20 bytes a node, reused from step to step and then by the
// results of New, Retained and RetainedObjects, and 8 bytes a non-tree edge.
func New(g Graph, root uint32) (*Tree, error) {
	if err := g.check(root); err != nil {
		return nil, err
	}
	n := len(g.Start) - 1

	// Five arrays of n words, each playing several parts in turn. c and d are
	// the two halves of one []uint64, kept for the first Retained to return;
	// b is kept for the first RetainedObjects.
	ab := make([]uint64, n)
	a, b := halves(ab)
	// a: preorder number of each node; then labels and bucket heads; then idom of each node
	// b: bucket links, relative dominators, then idoms, by number
	cd := make([]uint64, n)
	c, d := halves(cd)
	// c: DFS parent; then compressed ancestor
	// d: DFS cursor; then semidominator
	e := make([]uint32, n) // node of each number (the preorder)

	// Step 1: number the nodes the root reaches in depth-first preorder, and
	// collect the edges that are not tree edges, sorted by target. From here
	// on nodes are named by their number.
	var in pairs
	r := search(g.Start, g.Succ, root, a, e, c, d, &in)
	order := e[:r:r]
	in.sortByHigh(bits.Len32(uint32(r-1)), ab) // a and b are free until Step 2

	// Step 2: in reverse preorder, compute the semidominator of w, put w in
	// the bucket of its semidominator, link w to its parent, and give every
	// node in the bucket of the parent its relative dominator. Linking is
	// implicit: the nodes numbered last or after are in the forest. A node's
	// label slot holds its bucket head until the node is processed, when its
	// bucket is empty for good; its idom slot holds the next node in its
	// bucket until it leaves the bucket and gets its relative dominator.
	anc := c[:r] // the DFS parent until compressed
	semi := d[:r]
	lab := a[:r]
	for i := range lab {
		lab[i] = None
	}
	idom := b[:r]
	k := in.n - 1
	for w := uint32(r - 1); w >= 1; w-- {
		s := anc[w] // the parent is a predecessor numbered before w
		for ; k >= 0; k-- {
			x := in.at(k)
			if uint32(x>>32) != w {
				break
			}
			if v := uint32(x); v < w {
				s = min(s, v)
			} else if u := semi[eval(anc, lab, semi, v, w+1)]; u < s {
				s = u
			}
		}
		semi[w] = s
		idom[w] = lab[s]
		lab[s] = w
		lab[w] = w
		p := anc[w]
		for v := lab[p]; v != None; {
			next := idom[v]
			u := lab[v] // eval(v) when v is linked to an unlinked node, as most are
			if anc[v] >= w {
				u = eval(anc, lab, semi, v, w)
			}
			if semi[u] < semi[v] {
				idom[v] = u
			} else {
				idom[v] = p
			}
			v = next
		}
		lab[p] = None
	}
	in = pairs{}

	// Step 3: in preorder, a relative dominator that is not the
	// semidominator has the same immediate dominator as the node.
	idom[0] = 0
	for w := 1; w < r; w++ {
		if idom[w] != semi[w] {
			idom[w] = idom[idom[w]]
		}
	}

	// Step 4: back from numbers to nodes.
	out := a
	for i := range out {
		out[i] = None
	}
	for i, v := range order {
		out[v] = order[idom[i]]
	}

	t := &Tree{root: root, idom: out, order: order}
	t.spare.Store(&cd)
	t.spareObjects.Store(&b)
	return t, nil
}

// search numbers the nodes that root reaches in depth-first preorder: pre[v]
// is the number of node v, None if root does not reach it; order[i] is the
// node numbered i and parent[i] the number of its parent in the search tree.
// Every edge v->w that is not a tree edge, a self edge or an edge into the
// root goes into in as w<<32 | v (numbers both). It does not recurse: cursor[i] keeps the place in the edges of
// node i while the search is below it. It returns the number of nodes
// numbered.
func search(start, succ []uint32, root uint32, pre, order, parent, cursor []uint32, in *pairs) int {
	for i := range pre {
		pre[i] = None
	}
	pre[root] = 0
	order[0] = root
	parent[0] = None
	n := uint32(1)
	cur := uint32(0)
	e, end := start[root], start[root+1]
	for {
		for e < end {
			w := succ[e]
			e++
			pw := pre[w]
			if pw == None {
				pre[w] = n
				order[n] = w
				parent[n] = cur
				ws, we := start[w], start[w+1]
				if ws == we { // a leaf: nothing to search below it
					n++
					continue
				}
				cursor[cur] = e
				cur = n
				n++
				e, end = ws, we
				continue
			}
			if pw != cur && pw != 0 {
				in.add(uint64(pw)<<32 | uint64(cur))
			}
		}
		if cur == 0 {
			return int(n)
		}
		cur = parent[cur]
		e, end = cursor[cur], start[order[cur]+1]
	}
}

// pairs is a sequence of uint64, stored in chunks so that it grows without
// copying or slack.
type pairs struct {
	chunks [][]uint64
	n      int
}

const (
	chunkBits = 16
	chunkMask = 1<<chunkBits - 1
)

func (p *pairs) add(x uint64) {
	if p.n>>chunkBits == len(p.chunks) {
		p.chunks = append(p.chunks, make([]uint64, 1<<chunkBits))
	}
	p.chunks[p.n>>chunkBits][p.n&chunkMask] = x
	p.n++
}

func (p *pairs) at(i int) uint64     { return p.chunks[i>>chunkBits][i&chunkMask] }
func (p *pairs) set(i int, x uint64) { p.chunks[i>>chunkBits][i&chunkMask] = x }

// sortByHigh sorts p by the high 32 bits of its elements, of which only the
// low keyBits may be set. It takes time linear in the number of elements: a
// least-significant-digit radix sort through buf when buf can hold them all,
// or else an in-place most-significant-digit one (American flag sort).
func (p *pairs) sortByHigh(keyBits int, buf []uint64) {
	if p.n <= 1 || keyBits == 0 {
		return
	}
	if len(buf) < p.n {
		p.sortInPlace(keyBits)
		return
	}
	// An even number of passes, so that the result ends up in p, with
	// digits of up to 12 bits.
	passes := (keyBits + 11) / 12
	passes += passes % 2
	digit := (keyBits + passes - 1) / passes
	mask := uint64(1)<<digit - 1
	pos := make([]int, passes<<digit)
	for i := range p.n {
		k := p.at(i) >> 32
		for j := range passes {
			pos[j<<digit+int(k>>(j*digit)&mask)]++
		}
	}
	for j := range passes {
		at := 0
		for d, k := range pos[j<<digit : (j+1)<<digit] {
			pos[j<<digit+d] = at
			at += k
		}
	}
	buf = buf[:p.n]
	for j := range passes {
		shift := uint(32 + j*digit)
		at := pos[j<<digit : (j+1)<<digit]
		if j%2 == 0 {
			i := 0
			for _, chunk := range p.chunks {
				for _, x := range chunk[:min(len(chunk), p.n-i)] {
					d := int(x >> shift & mask)
					buf[at[d]] = x
					at[d]++
				}
				i += len(chunk)
			}
		} else {
			for _, x := range buf {
				d := int(x >> shift & mask)
				p.set(at[d], x)
				at[d]++
			}
		}
	}
}

// sortInPlace sorts p as sortByHigh does, in place: a most-significant-digit
// radix sort (American flag sort) with digits of up to 11 bits, and insertion
// sort for short runs.
func (p *pairs) sortInPlace(keyBits int) {
	const maxDigit = 11
	type run struct{ lo, hi, bits int } // sort p[lo:hi] by the low bits bits of the key
	var next, end [1 << maxDigit]int
	todo := []run{{0, p.n, keyBits}}
	for len(todo) > 0 {
		r := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if r.hi-r.lo <= 32 {
			for i := r.lo + 1; i < r.hi; i++ {
				x := p.at(i)
				j := i
				for ; j > r.lo && p.at(j-1)>>32 > x>>32; j-- {
					p.set(j, p.at(j-1))
				}
				p.set(j, x)
			}
			continue
		}
		d := min(maxDigit, r.bits)
		shift := uint(32 + r.bits - d)
		mask := uint64(1)<<d - 1
		clear(end[:1<<d])
		for i := r.lo; i < r.hi; i++ {
			end[p.at(i)>>shift&mask]++
		}
		at := r.lo
		for b := range 1 << d {
			next[b] = at
			at += end[b]
			end[b] = at
		}
		// Put every element in its bucket: take the first misplaced one of
		// bucket b and swap it along the cycle it starts until one that
		// belongs in b comes back.
		for b := range 1 << d {
			for next[b] < end[b] {
				x := p.at(next[b])
				for {
					xb := int(x >> shift & mask)
					if xb == b {
						break
					}
					y := p.at(next[xb])
					p.set(next[xb], x)
					next[xb]++
					x = y
				}
				p.set(next[b], x)
				next[b]++
			}
		}
		if rest := r.bits - d; rest > 0 {
			lo := r.lo
			for b := range 1 << d {
				if end[b]-lo > 1 {
					todo = append(todo, run{lo, end[b], rest})
				}
				lo = end[b]
			}
		}
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

// halves returns the two halves of s as arrays of len(s) uint32 each.
func halves(s []uint64) (lo, hi []uint32) {
	n := len(s)
	w := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s))), 2*n)
	return w[:n:n], w[n:]
}
