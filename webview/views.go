package webview

import (
	"cmp"
	"slices"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/heapdump"
)

// The views below are what the pages show and the API documents carry;
// docs/web.md describes their keys.

// childrenView is a page of the children of a node of the dominator tree.
type childrenView struct {
	Node     heapdump.NodeID `json:"node"`
	Offset   int             `json:"offset"`
	Total    int             `json:"child_count"`
	Children []nodeRow       `json:"children"`
	// Next is the offset of the next page, 0 when this is the last.
	Next int `json:"next_offset"`
}

// children returns the page of the children of v from offset on. s.mu is
// held.
func (s *Server) children(v heapdump.NodeID, offset, limit int) childrenView {
	ids, total := s.an.DomChildren(v, offset, limit)
	c := childrenView{Node: v, Offset: offset, Total: total, Children: rows(s.an.Nodes(ids))}
	if end := offset + len(ids); len(ids) > 0 && end < total {
		c.Next = end
	}
	return c
}

// nodeRow is a node of the dominator tree with the words a page shows
// for it.
type nodeRow struct {
	heap.Node
	// Label names the node: an object's type (or "object") and address, a
	// root's holder, "all roots" for the super-root.
	Label string `json:"label"`
}

// rows labels nodes.
func rows(nodes []heap.Node) []nodeRow {
	out := make([]nodeRow, len(nodes))
	for i, n := range nodes {
		out[i] = nodeRow{Node: n, Label: label(n)}
	}
	return out
}

// label names node n for people.
func label(n heap.Node) string {
	switch n.Kind {
	case heap.NodeSuperRoot:
		return "all roots"
	case heap.NodeRoot:
		if n.Root != nil {
			return n.Root.Short()
		}
		return "root"
	}
	t := n.Type
	if t == "" {
		t = "object"
	}
	return t + " at " + n.Addr
}

// maxChain is how many of a node's dominators its page lists.
const maxChain = 32

// maxPaths is how many paths from roots an object's page shows.
const maxPaths = 5

// nodeView is the page of one node: what it is, where it was allocated,
// its dominators, who holds it and what it retains.
type nodeView struct {
	Node nodeRow `json:"node"`
	// Dominators are the node's dominators, nearest first, at most
	// maxChain of them; DominatorsElided counts the others.
	Dominators       []nodeRow `json:"dominators"`
	DominatorsElided int       `json:"dominators_elided_count"`
	// AllocSite and AllocStack say where an object was allocated, when
	// the dump has a sample for it.
	AllocSite  *binsym.Position  `json:"alloc_site,omitempty"`
	AllocStack []binsym.Position `json:"alloc_stack"`
	// Paths are paths from roots to an object, shortest first, one per
	// root; RuntimeRoots counts the runtime's own globals passed over.
	Paths        []heap.RootPath `json:"paths"`
	RuntimeRoots int             `json:"runtime_root_count"`
	// Children is the first page of what the node retains.
	Children childrenView `json:"children"`
}

// nodePage describes node v. s.mu is held.
func (s *Server) nodePage(v heapdump.NodeID) (*nodeView, error) {
	an := s.an
	nv := &nodeView{Node: rows(an.Nodes([]heapdump.NodeID{v}))[0]}
	var chain []heapdump.NodeID
	sr := an.Graph().SuperRoot()
	for d := an.Idom(v); d != heapdump.NoNode && v != sr; d = an.Idom(d) {
		if len(chain) == maxChain {
			nv.DominatorsElided++
		} else {
			chain = append(chain, d)
		}
		if d == sr {
			break
		}
	}
	nv.Dominators = rows(an.Nodes(chain))
	nv.AllocSite, nv.AllocStack = an.AllocSite(v)
	nv.AllocStack = nonNil(nv.AllocStack)
	paths, rt, err := an.Paths(v, maxPaths)
	if err != nil {
		return nil, err
	}
	nv.Paths, nv.RuntimeRoots = nonNil(paths), rt
	if n := &nv.Node; n.Type == "" && len(paths) > 0 {
		// Typed from what points to it on the shortest path.
		steps := paths[0].Steps
		n.Type = steps[len(steps)-1].Type
		n.Label = label(n.Node)
	}
	nv.Children = s.children(v, 0, s.pageSize)
	return nv, nil
}

// maxRootRows is how many goroutines, globals or other roots the roots
// page lists, largest retained first.
const maxRootRows = 1000

// rootsView lists the roots: goroutines with what each frame holds,
// globals, timers and finalizers, each by retained size.
type rootsView struct {
	Goroutines      []goroutineView `json:"goroutines"`
	GoroutinesTotal int             `json:"goroutine_count"`
	Globals         []rootView      `json:"globals"`
	GlobalsTotal    int             `json:"global_count"`
	// Timers are the report's groups held by timers.
	Timers      []*heap.Group `json:"timers"`
	Finalizers  []rootView    `json:"finalizers"`
	Others      []rootView    `json:"others"`
	OthersTotal int           `json:"other_count"`
}

// goroutineView is a goroutine and what its frames hold.
type goroutineView struct {
	ID            uint64           `json:"goroutine_id"`
	Status        string           `json:"status"`
	CreatedBy     *binsym.Position `json:"created_by,omitempty"`
	RetainedBytes uint64           `json:"retained_bytes"`
	Objects       uint64           `json:"retained_objects"`
	// Frames are the frames that hold something (root nodes), innermost
	// first, and the goroutine's own root (an unstarted closure).
	Frames []rootView `json:"frames"`
}

// rootView is one root node and what it alone retains.
type rootView struct {
	Node   heapdump.NodeID `json:"node"`
	Holder heap.Holder     `json:"holder"`
}

// rootsPage builds the roots page, once. s.mu is held.
func (s *Server) rootsPage() (*rootsView, error) {
	if s.roots != nil {
		return s.roots, nil
	}
	an := s.an
	g := an.Graph()
	d := g.Dump()
	rv := &rootsView{}
	gs := make([]goroutineView, len(d.Goroutines))
	for i := range d.Goroutines {
		gr := &d.Goroutines[i]
		gv := &gs[i]
		gv.ID, gv.Status = gr.ID, gr.Status.String()
		if w := d.WaitReason(i); w != "" {
			gv.Status = w
		}
		if an.Binary != nil {
			if f, ok := an.Binary.CallSite(gr.GoPC); ok {
				gv.CreatedBy = &binsym.Position{Function: f.Name, File: f.File, Line: f.Line}
			}
		}
	}
	g.ForEachRoot(func(r *heapdump.Root) bool {
		h, _ := an.RootHolder(r.Node)
		row := rootView{Node: r.Node, Holder: h}
		switch r.Kind {
		case heapdump.RootFrame, heapdump.RootGoroutine:
			if r.Goroutine >= 0 && r.Goroutine < len(gs) {
				gv := &gs[r.Goroutine]
				gv.Frames = append(gv.Frames, row)
				gv.RetainedBytes += h.RetainedBytes
				gv.Objects += h.Objects
			}
		case heapdump.RootGlobal:
			rv.Globals = append(rv.Globals, row)
		case heapdump.RootFinalizer, heapdump.RootQueuedFinalizer:
			rv.Finalizers = append(rv.Finalizers, row)
		default:
			rv.Others = append(rv.Others, row)
		}
		return true
	})
	byRetained := func(x, y rootView) int {
		return cmp.Or(cmp.Compare(y.Holder.RetainedBytes, x.Holder.RetainedBytes), cmp.Compare(x.Node, y.Node))
	}
	slices.SortStableFunc(gs, func(x, y goroutineView) int {
		return cmp.Or(cmp.Compare(y.RetainedBytes, x.RetainedBytes), cmp.Compare(x.ID, y.ID))
	})
	rv.GoroutinesTotal = len(gs)
	rv.Goroutines = gs[:min(len(gs), maxRootRows)]
	for i := range rv.Goroutines {
		rv.Goroutines[i].Frames = nonNil(rv.Goroutines[i].Frames)
	}
	slices.SortStableFunc(rv.Globals, byRetained)
	rv.GlobalsTotal = len(rv.Globals)
	rv.Globals = nonNil(rv.Globals[:min(len(rv.Globals), maxRootRows)])
	slices.SortStableFunc(rv.Finalizers, byRetained)
	rv.Finalizers = nonNil(rv.Finalizers[:min(len(rv.Finalizers), maxRootRows)])
	slices.SortStableFunc(rv.Others, byRetained)
	rv.OthersTotal = len(rv.Others)
	rv.Others = nonNil(rv.Others[:min(len(rv.Others), maxRootRows)])
	rep, err := s.holders()
	if err != nil {
		return nil, err
	}
	rv.Timers = []*heap.Group{}
	for _, gr := range rep.Groups {
		if gr.Root.Kind == heapdump.RootTimer {
			rv.Timers = append(rv.Timers, gr)
		}
	}
	s.roots = rv
	return rv, nil
}

// nonNil returns s, or an empty slice for nil, which JSON writes as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
