package heap

import (
	"slices"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
)

// shortestPaths returns, for each target, a shortest path of nodes from
// from to it (from first, the target last), found by one breadth-first
// search that stops once every target is reached. A path is nil for a
// target the search does not reach.
//
// When from is a root node that dominates a target, every path to the
// target runs through it, so the search from it finds the reference chain
// that matters; from the super-root it finds the nearest of the roots that
// share the target.
func (a *Analysis) shortestPaths(from uint32, targets []uint32) [][]uint32 {
	if a.parent == nil {
		a.parent = make([]uint32, len(a.Start)-1)
	}
	// parent[v] is v's predecessor plus one on the search tree, 0 while v
	// is unseen; the queue lists what to clear for the next search.
	parent := a.parent
	want := make(map[uint32]bool, len(targets))
	for _, t := range targets {
		want[t] = true
	}
	parent[from] = from + 1
	queue := []uint32{from}
	left := len(want)
	if want[from] {
		left--
	}
	for head := 0; head < len(queue) && left > 0; head++ {
		u := queue[head]
		for _, w := range a.Succ[a.Start[u]:a.Start[u+1]] {
			if parent[w] != 0 {
				continue
			}
			parent[w] = u + 1
			queue = append(queue, w)
			if want[w] {
				left--
			}
		}
	}
	paths := make([][]uint32, len(targets))
	for i, t := range targets {
		if parent[t] == 0 {
			continue
		}
		var p []uint32
		for v := t; ; v = parent[v] - 1 {
			p = append(p, v)
			if v == from {
				break
			}
		}
		slices.Reverse(p)
		paths[i] = p
	}
	for _, v := range queue {
		parent[v] = 0
	}
	return paths
}

// reacher is what keeps an object alive, found by walking the graph
// backwards from it: a root node, or a goroutine whose runtime.g holds it
// through the goroutine's pprof labels (g is its object node).
type reacher struct {
	root   uint32 // the root node, or noNode for a goroutine's labels
	g      uint32 // the runtime.g object of a labels reacher
	gIndex int    // its index in Goroutines
}

// reachersOfObject returns what keeps object v alive: the root nodes from
// which it is reachable on paths that do not pass through node avoid (noNode
// for none), walking the reverse graph (built on first use) back from v. A
// goroutine's runtime.g ends the walk: when its pprof labels lead to v, the
// goroutine is what holds v, not the frames and globals that reach every g;
// when another of its fields does (its M, the M's P and the P's timers), it
// is the runtime's own structure. The cost is that of the walk: the objects
// that reach v and their edges.
func (a *Analysis) reachersOfObject(v, avoid uint32) []reacher {
	if a.preds == nil {
		a.preds = reverse(a.Start, a.Succ)
		a.seen = make([]uint64, (len(a.Start)-1+63)/64)
	}
	p, seen := a.preds, a.seen
	mark := func(w uint32) bool {
		if seen[w/64]&(1<<(w%64)) != 0 {
			return false
		}
		seen[w/64] |= 1 << (w % 64)
		return true
	}
	marked := []uint32{v}
	mark(v)
	if avoid != noNode && mark(avoid) {
		marked = append(marked, avoid)
	}
	queue := []uint32{v}
	var out []reacher
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		for _, w := range p.Succ[p.Start[u]:p.Start[u+1]] {
			if w == a.SuperRoot || !mark(w) {
				continue
			}
			marked = append(marked, w)
			switch gi, isG := a.gObject(w); {
			case !a.isObject(w):
				out = append(out, reacher{root: w, g: noNode})
			case isG:
				if a.labelsPoint(w, u) {
					out = append(out, reacher{root: noNode, g: w, gIndex: gi})
				}
			default:
				queue = append(queue, w)
			}
		}
	}
	// Clear what was marked, for the next call.
	for _, w := range marked {
		seen[w/64] &^= 1 << (w % 64)
	}
	return out
}

// gObject reports whether object v is the runtime.g of a goroutine, and
// which.
func (a *Analysis) gObject(v uint32) (int, bool) {
	if !a.isObject(v) {
		return 0, false
	}
	if a.gNodes == nil {
		a.gNodes = make([]uint64, (a.NumObjects+63)/64)
		for _, g := range a.Goroutines {
			if u, ok := a.Find(g.Addr); ok {
				a.gNodes[u/64] |= 1 << (u % 64)
			}
		}
	}
	if a.gNodes[v/64]&(1<<(v%64)) == 0 {
		return 0, false
	}
	return a.goroutineAt(a.ObjectAddr(v))
}

// labelsPoint reports whether the pprof labels of the runtime.g object g
// point into object u. It needs the executable for runtime.g's layout.
func (a *Analysis) labelsPoint(g, u uint32) bool {
	if a.labelsOff == 0 {
		a.labelsOff = -1
		if a.Binary != nil {
			if t := a.Binary.TypeByName("runtime.g"); t != nil {
				for _, f := range t.Fields {
					if f.Name == "labels" {
						a.labelsOff = f.Offset
					}
				}
			}
		}
	}
	ps := int64(a.Params.PtrSize)
	if a.labelsOff < 0 {
		return false
	}
	rec, err := a.ObjectRecord(g, int(a.labelsOff+ps))
	if err != nil {
		return false
	}
	w, ok := a.Find(a.word(rec.Contents, a.labelsOff))
	return ok && w == u
}

// reachers records, for every node, up to two of the roots that reach it,
// leaving out the runtime's own globals (see isRuntimeGlobal), which reach
// much of the heap: enough to tell whether a root other than a given one
// reaches an object, for every object at once.
type reachers struct {
	first []uint32 // a root node that reaches the node, plus one; 0 for none
	more  []uint64 // bitmap: another root reaches the node too
}

// reachersOf computes the reachers of every node with a search from each
// root that goes on only through nodes where it records something new, the
// first or the second root to reach them. Every node is searched from at
// most twice, so the whole costs two searches of the graph.
//
// That is enough: when a node has its two roots, the searches that recorded
// them went on to its successors, each of which got a root from the first
// and, if that was the same root, the second from the other; so everything
// below a node with two roots has two, and a search need not go there.
func (a *Analysis) reachersOf() *reachers {
	n := len(a.Start) - 1
	x := &reachers{first: make([]uint32, n), more: make([]uint64, (n+63)/64)}
	var queue []uint32
	for i := range a.Roots {
		r := uint32(a.NumObjects + i)
		if a.isRuntimeGlobalRoot(r) {
			continue
		}
		queue = append(queue[:0], r)
		for head := 0; head < len(queue); head++ {
			u := queue[head]
			for _, w := range a.Succ[a.Start[u]:a.Start[u+1]] {
				switch f := x.first[w]; {
				case f == 0:
					x.first[w] = r + 1
				case f == r+1 || x.more[w/64]&(1<<(w%64)) != 0:
					continue
				default:
					x.more[w/64] |= 1 << (w % 64)
				}
				if _, isG := a.gObject(w); !isG {
					queue = append(queue, w) // a goroutine's g ends the search, as in reachersOfObject
				}
			}
		}
	}
	return x
}

// other reports whether a root other than root reaches node v.
func (x *reachers) other(v, root uint32) bool {
	if x.more[v/64]&(1<<(v%64)) != 0 {
		return true
	}
	f := x.first[v]
	return f != 0 && f-1 != root
}

// reverse builds the reverse of a graph in compressed sparse row form.
func reverse(start, succ []uint32) *dom.Graph {
	n := len(start) - 1
	rstart := make([]uint32, n+2)
	for _, w := range succ {
		rstart[w+2]++
	}
	for i := 2; i < len(rstart); i++ {
		rstart[i] += rstart[i-1]
	}
	rsucc := make([]uint32, len(succ))
	for u := 0; u < n; u++ {
		for _, w := range succ[start[u]:start[u+1]] {
			rsucc[rstart[w+1]] = uint32(u)
			rstart[w+1]++
		}
	}
	return &dom.Graph{Start: rstart[:n+1], Succ: rsucc}
}
