package dom

import (
	"iter"
	"math/bits"
	"runtime"
	"sort"
)

// Option changes what New computes beyond the tree.
type Option uint8

// KeepRootKids has New keep the predecessors of the nodes the root
// immediately dominates (Tree.TakeRootKids). In a heap graph whose root
// links to the GC roots, those nodes are the roots and the objects no
// single root holds, and their predecessors are all the edges that cross
// from one holding into another. New has them at hand: they are the tree
// edges and the non-tree edges it sorts by target anyway. New collects the
// predecessors on another core while it turns its results from numbers to
// nodes and after it returns, in work memory it has, which the first
// Retained waits for. It costs 4 bytes a node with
// non-tree edges into it, and keeps New's non-tree edges, until they are
// collected, and 8 bytes a kept node plus 4 a kept edge until the caller
// lets go.
const KeepRootKids Option = 1

// RootKids are the nodes a tree's root immediately dominates, in increasing
// order, each with its predecessors: the nodes with an edge into it, the
// parent of New's depth-first search first, without self edges, duplicates
// kept.
type RootKids struct {
	kids  bitset   // by node
	cum   []uint32 // cum[i] counts the kids below node 64*i
	start []uint32 // by rank, one more
	preds []uint32
}

// Words returns the kids as a bitset: node v is one when bit v%64 of
// word v/64 is set. The caller must not modify it.
func (k *RootKids) Words() []uint64 { return k.kids }

// Len returns the number of nodes the root immediately dominates.
func (k *RootKids) Len() int { return int(k.cum[len(k.cum)-1]) }

// Rank returns the rank of node v among the kids, in increasing order, and
// whether v is one.
func (k *RootKids) Rank(v uint32) (int, bool) {
	if int(v/64) >= len(k.kids) || !k.kids.has(v) {
		return 0, false
	}
	return k.Below(v), true
}

// Kid returns the kid of rank i, which must be below Len.
func (k *RootKids) Kid(i int) uint32 {
	for _, v := range k.Ranks(i, i+1) {
		return v
	}
	return None
}

// Below returns the number of kids below node v, which is the rank of v
// when v is one.
func (k *RootKids) Below(v uint32) int {
	if int(v/64) >= len(k.kids) {
		return k.Len()
	}
	return int(k.cum[v/64]) + bits.OnesCount64(k.kids[v/64]&(1<<(v%64)-1))
}

// Preds returns the predecessors of the kid of rank i, none after
// DropPreds. They are k's own: the caller that took k from the tree may
// rewrite them in place.
func (k *RootKids) Preds(i int) []uint32 {
	if k.start == nil {
		return nil
	}
	return k.preds[k.start[i]:k.start[i+1]]
}

// DropPreds lets go of the predecessors, keeping the kids and their ranks.
func (k *RootKids) DropPreds() { k.start, k.preds = nil, nil }

// TakeRootKids returns what KeepRootKids kept, once: later calls, and calls
// on a tree computed without it, return nil. New returns before the
// predecessors are all collected: the first call waits for them.
func (t *Tree) TakeRootKids() *RootKids {
	t.rootKidsDone.Wait()
	return t.rootKids.Swap(nil)
}

// newRootKids returns the kids of the root, number 0, from New's arrays:
// idom by number and order the node of each number; n is the number of
// nodes of the graph. Their predecessors are for collectPreds.
func newRootKids(n int, idom, order []uint32) *RootKids {
	k := &RootKids{kids: newBitset(n), cum: make([]uint32, (n+63)/64+1)}
	for w := 1; w < len(order); w++ {
		if idom[w] == 0 {
			k.kids.set(order[w])
		}
	}
	for i, word := range k.kids {
		k.cum[i+1] = k.cum[i] + uint32(bits.OnesCount64(word))
	}
	return k
}

// collectPreds collects the predecessors of the kids from New's arrays:
// order the node of each number, idom the number of each number's
// immediate dominator, parent the search parent of each target
// of non-tree edges, in order, and in those edges, grouped by target (see
// edges). It only reads them: New's caller goes on meanwhile. rank is work
// memory of at least len(order) words.
//
// Two sweeps, each over the numbers in order and the edges' groups with
// them (the groups come in the order of their targets): the first ranks
// the kids and counts their predecessors, the second places them. For a
// big graph each sweep runs on every core, each a share of the numbers,
// which finds where its groups and parents start by counting: the kids of
// the shares, and so their counters and places, are apart.
func (k *RootKids) collectPreds(order, idom []uint32, in edges, hasIn bitset, parent, rank []uint32) {
	r := len(order)
	kids := k.Len()
	// The rank of each kid by number, None for the other numbers, and
	// each kid's predecessors counted in start[rank+2]: its parent, and
	// its group of non-tree edges. The kids are the numbers whose idom is
	// the root's, 0, read in order; only they are looked up by node. Each
	// count is written, not added: a fresh page read first is the
	// kernel's shared zero page, and the write that follows faults again
	// and has every core flush the old mapping, by an interrupt that a
	// virtual machine's host delivers (10M nodes: about 60 ms of CPU).
	k.start = make([]uint32, kids+2)
	rank = rank[:r]
	cores := 1
	if r >= collectParallelMin {
		cores = min(runtime.GOMAXPROCS(0), 8)
	}
	// share j: numbers lo to hi-1, whose groups start at edge at and
	// whose parents at parent[g].
	type share struct{ lo, hi, at, g int }
	shares := make([]share, cores)
	parallel(cores, func(j int) {
		sh := &shares[j]
		sh.lo, sh.hi = max(1, j*r/cores), (j+1)*r/cores
		sh.g = hasIn.countBelow(sh.lo)
		sh.at = in.groupStart(sh.g)
		at := sh.at // the first edge of the next group
		for w := sh.lo; w < sh.hi; w++ {
			end := at
			if hasIn.has(uint32(w)) {
				end = in.groupEnd(at)
			}
			rank[w] = None
			if idom[w] == 0 {
				if i, ok := k.Rank(order[w]); ok {
					rank[w] = uint32(i)
					k.start[i+2] = 1 + uint32(end-at)
				}
			}
			at = end
		}
	})
	for i := 2; i < len(k.start); i++ {
		k.start[i] += k.start[i-1]
	}
	// Place them at start[rank+1]++, which leaves start[rank+1] where the
	// next kid's begin. Parents go first: a kid without non-tree edges into
	// it hangs from the root, the others' parents were kept in order.
	k.preds = make([]uint32, int(k.start[kids+1]))
	parallel(cores, func(j int) {
		sh := shares[j]
		at, g := sh.at, sh.g
		for w := sh.lo; w < sh.hi; w++ {
			p, end := uint32(0), at
			if hasIn.has(uint32(w)) {
				p = parent[g]
				g++
				end = in.groupEnd(at)
			}
			if i := rank[w]; i != None {
				o := k.start[i+1]
				k.preds[o] = order[p]
				o++
				for e := at; e < end; e++ {
					k.preds[o] = order[in.at(e)&^mark]
					o++
				}
				k.start[i+1] = o
			}
			at = end
		}
	})
	k.start = k.start[:kids+1]
}

// collectParallelMin is the number of numbered nodes from which
// collectPreds sweeps them on every core; tests lower it.
var collectParallelMin = 1 << 16

// All yields the kids in increasing order, each with its rank.
func (k *RootKids) All() iter.Seq2[int, uint32] { return k.Ranks(0, k.Len()) }

// Ranks yields the kids of ranks lo to hi-1, in increasing order, each
// with its rank.
func (k *RootKids) Ranks(lo, hi int) iter.Seq2[int, uint32] {
	return func(yield func(int, uint32) bool) {
		// The word that holds rank lo: the last whose kids below it are
		// at most lo.
		wi := max(0, sort.Search(len(k.kids), func(i int) bool { return int(k.cum[i+1]) > lo }))
		if wi >= len(k.kids) {
			return
		}
		i := int(k.cum[wi])
		for ; wi < len(k.kids) && i < hi; wi++ {
			for word := k.kids[wi]; word != 0 && i < hi; i++ {
				v := uint32(wi*64 + bits.TrailingZeros64(word))
				word &= word - 1
				if i >= lo && !yield(i, v) {
					return
				}
			}
		}
	}
}

// Bytes returns the memory k holds.
func (k *RootKids) Bytes() int {
	return 8*cap(k.kids) + 4*(cap(k.cum)+cap(k.start)+cap(k.preds))
}
