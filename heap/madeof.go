package heap

import (
	"cmp"
	"slices"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/allochelper"
)

// Part is one kind of object in what a group retains: objects of one size
// and allocation site, typed from one of them.
type Part struct {
	// Type is the objects' Go type (that of one of them), "" when unknown.
	Type string `json:"type"`
	// Size is the size of each object.
	Size uint64 `json:"size_bytes"`
	// AllocSite is where they were allocated, when the dump has a sample.
	AllocSite *binsym.Position `json:"alloc_site,omitempty"`
	// Count and Bytes add them up.
	Count uint64 `json:"object_count"`
	Bytes uint64 `json:"bytes"`
}

// Limits of what madeOf looks at and says.
const (
	// maxParts is how many parts a group lists.
	maxParts = 5
	// maxMadeOfObjects is how many of the objects a group's first member
	// retains madeOf counts: a bound on its time and memory. The parts
	// are of those the search from the member finds first.
	maxMadeOfObjects = 1 << 18
)

// partKey is what objects of one part share: their size and allocation
// stack (a memory profile bucket of the dump, nil for none). Parts of the
// same type, size and allocation site are merged once typed.
type partKey struct {
	size   uint64
	bucket *heapdump.Bucket
}

// madeOf says what object v, typed as the last of steps, retains: the
// largest parts of its retained set by bytes, each typed from one of its
// objects, and the typed path from v to one object of the largest part
// (through the container v is to one of its entries). It walks the
// objects v dominates breadth first, at most maxMadeOfObjects of them,
// without recursion: an object is in v's retained set when its immediate
// dominator is, which every path from v to it passes through. An edge that
// leaves the holding v is in goes to a shared top (see shares), which a
// bitmap tells at once: a map whose entries a list shares costs no lookup
// per entry.
// It also returns how many objects the parts count: fewer than v retains
// (less v itself) when it stopped at the bound.
func (a *Analysis) madeOf(v heapdump.NodeID, last typedStep) ([]Part, []Step, uint64, error) {
	if a.RetainedObjects(v) <= 1 {
		return nil, nil, 0, nil
	}
	type acc struct {
		Part
		first heapdump.NodeID
	}
	parts := map[partKey]*acc{}
	s := a.shares()
	// parent[w] is w's predecessor on the search plus one, 0 while unseen;
	// the queue lists what to clear.
	parent := a.searchParents()
	parent[v] = v + 1
	queue := []heapdump.NodeID{v}
	for head := 0; head < len(queue) && len(queue) < maxMadeOfObjects; head++ {
		u := queue[head]
		for _, w := range a.g.Succ(u) {
			if s.isShared(w) || parent[w] != 0 || !a.reachable(w) || parent[a.Idom(w)] == 0 {
				continue // seen, or not retained by v alone
			}
			parent[w] = u + 1
			queue = append(queue, w)
			k := partKey{size: a.g.Size(w)}
			if b, ok := a.g.AllocSite(w); ok {
				k.bucket = b
			}
			p := parts[k]
			if p == nil {
				p = &acc{Part: Part{Size: k.size}, first: w}
				parts[k] = p
			}
			p.Count++
			p.Bytes += k.size
		}
	}
	defer func() {
		for _, u := range queue {
			parent[u] = 0
		}
	}()
	list := make([]*acc, 0, len(parts))
	keys := make(map[*acc]partKey, len(parts))
	for k, p := range parts {
		list = append(list, p)
		keys[p] = k
	}
	order := func(x, y *acc) int {
		return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), cmp.Compare(y.Count, x.Count), cmp.Compare(x.first, y.first))
	}
	slices.SortFunc(list, order)
	// Type the largest parts; those of one type, size and site (made by
	// stacks that differ further out) are one.
	list = list[:min(len(list), 3*maxParts)]
	rec, err := a.g.ObjectRecord(v, 0)
	if err != nil {
		return nil, nil, 0, err
	}
	// These paths follow the search from v: they share no typed step
	// with those of a search from a root.
	a.types.newSearch()
	defer a.types.newSearch()
	type typed struct {
		typ  string
		size uint64
		site binsym.Position
	}
	merged := map[typed]*acc{}
	steps := map[*acc][]typedStep{}
	var kept []*acc
	for _, p := range list {
		// The path from v to the part's first object, v first.
		var path []heapdump.NodeID
		for u := p.first; ; u = parent[u] - 1 {
			path = append(path, u)
			if u == v {
				break
			}
		}
		slices.Reverse(path)
		st, err := a.types.limitedWalk(path, a.maxSteps, rec, &last)
		if err != nil {
			return nil, nil, 0, err
		}
		p.Type = st[len(st)-1].Type
		if b := keys[p].bucket; b != nil {
			if s := firstSite(b.Stack, allochelper.Is); s != nil {
				c := *s // not a pointer into the dump's records
				p.AllocSite = &c
			}
		}
		k := typed{typ: p.Type, size: p.Size}
		if p.AllocSite != nil {
			k.site = *p.AllocSite
		}
		if m := merged[k]; m != nil && p.Type != "" {
			m.Count += p.Count
			m.Bytes += p.Bytes
			continue
		}
		merged[k] = p
		steps[p] = st
		kept = append(kept, p)
	}
	slices.SortFunc(kept, order)
	kept = kept[:min(len(kept), maxParts)]
	out := make([]Part, len(kept))
	var inside []Step
	for i, p := range kept {
		out[i] = p.Part
	}
	if len(kept) > 0 {
		for _, s := range steps[kept[0]] {
			inside = append(inside, a.withContextSite(s))
		}
	}
	return out, inside, uint64(len(queue) - 1), nil
}
