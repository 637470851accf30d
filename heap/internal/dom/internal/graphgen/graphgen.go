// Package graphgen generates large graphs for the benchmarks of package dom:
// one shaped like the heap of a Go process, and uniformly random ones.
package graphgen

import (
	"math/rand/v2"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
)

// A Heap is a generated object graph: the graph, its root (a super-root, last,
// as the heap reader makes it) and the size of every node.
type Heap struct {
	Graph dom.Graph
	Root  uint32
	Sizes []uint32
}

// builder collects edges node by node; nodes are added in id order.
type builder struct {
	start []uint32
	succ  []uint32
}

func (b *builder) node(succs ...uint32) {
	b.succ = append(b.succ, succs...)
	b.start = append(b.start, uint32(len(b.succ)))
}

// HeapShape returns a graph of about n nodes shaped like the heap of the
// benchmark program of the issue: a linked list of 80-byte nodes (two thirds
// of the nodes), a map holding every other one of them with a 16-byte key
// object each, its group arrays being nodes of about 14000 edges; five slices
// holding n/3 pointers to random list nodes in all, so that there are about
// 1.67 edges a node; one percent dead objects, some pointing into the live ones;
// and a super-root, last, linked to two goroutine frames and three globals.
// Node ids follow the heap reader's: objects are numbered span by span, a
// span holding consecutive objects of one size, spans in roughly the order
// they were first used. The list is the first thing the search meets.
func HeapShape(n int, seed uint64) Heap {
	rng := rand.New(rand.NewPCG(seed, 0x6c697374))

	const (
		groupEntries = 7 * 1024 // slots of a full table's group array, at 7/8 load
		slices       = 5
		listPerSpan  = 8192 / 80
		keysPerSpan  = 8192 / 16
	)
	dead := n / 100
	fixed := 8 // super-root, two frames, three globals, map header, directory
	nSlices := slices
	// list L, keys L/2, tables L/2/groupEntries (a group array each):
	// L + L/2 + L/(2*groupEntries) = n - dead - fixed - nSlices.
	rest := n - dead - fixed - nSlices
	if rest < 4 {
		rest = 4
	}
	L := int(float64(rest) / (1.5 + 0.5/groupEntries))
	K := L / 2
	T := (K + groupEntries - 1) / groupEntries
	if T == 0 {
		T = 1
	}
	sliceLen := n / 3 / slices
	if sliceLen < 1 {
		sliceLen = 1
	}

	// Assign ids: list nodes and keys are allocated alternately, each kind
	// filling spans of its size class; spans are numbered in the order first
	// used, with a little shuffling for address order.
	listID := make([]uint32, L)
	keyID := make([]uint32, K)
	type span struct {
		list bool
		from int // index of the first object in listID or keyID
		len  int
	}
	var spans []span
	li, ki := 0, 0
	for li < L || ki < K {
		if li < L {
			m := min(listPerSpan, L-li)
			spans = append(spans, span{true, li, m})
			li += m
		}
		// keys advance at half the list's pace
		for ki < K && ki < li/2 {
			m := min(keysPerSpan, K-ki)
			spans = append(spans, span{false, ki, m})
			ki += m
		}
	}
	for i := range spans { // swap spans within windows of 16
		j := i + rng.IntN(16)
		if j < len(spans) {
			spans[i], spans[j] = spans[j], spans[i]
		}
	}
	next := uint32(0)
	for _, s := range spans {
		ids := keyID
		if s.list {
			ids = listID
		}
		for i := s.from; i < s.from+s.len; i++ {
			ids[i] = next
			next++
		}
	}
	// Then the big objects, the fixed ones, the dead ones, and the root.
	groupID := make([]uint32, T)
	for i := range groupID {
		groupID[i] = next
		next++
	}
	sliceID := make([]uint32, nSlices)
	for i := range sliceID {
		sliceID[i] = next
		next++
	}
	header, directory := next, next+1
	frame1, frame2 := next+2, next+3
	global1, global2, global3 := next+4, next+5, next+6
	next += 7
	deadFirst := next
	next += uint32(dead)
	root := next
	total := int(next) + 1

	// Map contents: entry j holds list node 2j and key j, in a random group
	// array at a random position.
	entries := make([][]uint32, T)
	for j := range K {
		t := rng.IntN(T)
		entries[t] = append(entries[t], uint32(j))
	}
	for _, e := range entries {
		rng.Shuffle(len(e), func(a, b int) { e[a], e[b] = e[b], e[a] })
	}

	// Emit nodes in id order: find each id's kind.
	kind := make([]uint8, total) // 0 list, 1 key
	index := make([]uint32, total)
	for i, id := range listID {
		kind[id], index[id] = 0, uint32(i)
	}
	for i, id := range keyID {
		kind[id], index[id] = 1, uint32(i)
	}
	b := &builder{
		start: make([]uint32, 1, total+1),
		succ:  make([]uint32, 0, L+2*K+nSlices*sliceLen+T+dead*2+16),
	}
	sizes := make([]uint32, total)
	var buf []uint32
	for id := range uint32(total) {
		switch {
		case id < uint32(L+K) && kind[id] == 0:
			i := index[id]
			sizes[id] = 80
			if int(i)+1 < L {
				b.node(listID[i+1])
			} else {
				b.node()
			}
		case id < uint32(L+K):
			sizes[id] = 16
			b.node()
		case id >= groupID[0] && id < groupID[0]+uint32(T):
			t := id - groupID[0]
			buf = buf[:0]
			for _, j := range entries[t] {
				buf = append(buf, keyID[j], listID[2*j])
			}
			sizes[id] = 1024 * 8 * 24
			b.node(buf...)
		case nSlices > 0 && id >= sliceID[0] && id < sliceID[0]+uint32(nSlices):
			buf = buf[:0]
			for range sliceLen {
				buf = append(buf, listID[rng.IntN(L)])
			}
			sizes[id] = uint32(8 * sliceLen)
			b.node(buf...)
		case id == header:
			sizes[id] = 48
			b.node(directory)
		case id == directory:
			sizes[id] = uint32(8 * T)
			b.node(groupID...)
		case id == frame1: // a goroutine walking the list
			b.node(listID[0], listID[rng.IntN(L)])
		case id == frame2: // one with a slice
			b.node(sliceID[0])
		case id == global1:
			b.node(header)
		case id == global2:
			b.node(sliceID[1:]...)
		case id == global3:
			b.node()
		case id >= deadFirst && id < deadFirst+uint32(dead):
			sizes[id] = 80
			// dead list nodes: a dead chain, some pointing into the live list
			i := id - deadFirst
			switch {
			case i%4 == 0:
				b.node(listID[rng.IntN(L)])
			case i+1 < uint32(dead):
				b.node(id + 1)
			default:
				b.node()
			}
		case id == root:
			b.node(frame1, frame2, global1, global2, global3)
		default:
			panic("graphgen: unassigned id")
		}
	}
	return Heap{Graph: dom.Graph{Start: b.start, Succ: b.succ}, Root: root, Sizes: sizes}
}

// Random returns a graph of n nodes and m edges drawn uniformly, root 0, with
// sizes drawn from 16 to 1024 bytes. Every node also gets an edge from a
// random earlier node with probability treeProb, to keep most of it
// reachable.
func Random(n, m int, treeProb float64, seed uint64) Heap {
	rng := rand.New(rand.NewPCG(seed, 0x72616e64))
	deg := make([]uint32, n+1)
	src := make([]uint32, 0, m)
	dst := make([]uint32, 0, m)
	for w := 1; w < n; w++ {
		if len(src) < m && rng.Float64() < treeProb {
			src = append(src, uint32(rng.IntN(w)))
			dst = append(dst, uint32(w))
		}
	}
	for len(src) < m {
		src = append(src, uint32(rng.IntN(n)))
		dst = append(dst, uint32(rng.IntN(n)))
	}
	for _, v := range src {
		deg[v+1]++
	}
	for i := 1; i <= n; i++ {
		deg[i] += deg[i-1]
	}
	succ := make([]uint32, len(src))
	pos := make([]uint32, n)
	copy(pos, deg[:n])
	for i, v := range src {
		succ[pos[v]] = dst[i]
		pos[v]++
	}
	sizes := make([]uint32, n)
	for i := range sizes {
		sizes[i] = 16 + uint32(rng.IntN(1009))
	}
	return Heap{Graph: dom.Graph{Start: deg, Succ: succ}, Root: 0, Sizes: sizes}
}
