package watch

import (
	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// safeGroup returns a copy of g whose names (types, functions, files,
// globals, fields) have their control characters escaped: they come from
// the dump and the binary, and reach logs, terminals and HTTP answers.
func safeGroup(g *heap.Group) *heap.Group {
	c := *g
	c.Root = safeHolder(c.Root)
	c.OtherRoots = make([]heap.Holder, len(g.OtherRoots))
	for i, h := range g.OtherRoots {
		c.OtherRoots[i] = safeHolder(h)
	}
	c.Path = make([]heap.Step, len(g.Path))
	for i, s := range g.Path {
		s.Via, s.Type = textsafe.Escape(s.Via), textsafe.Escape(s.Type)
		c.Path[i] = s
	}
	c.Object.Type = textsafe.Escape(c.Object.Type)
	c.Object.AllocSite = safePosition(c.Object.AllocSite)
	c.Object.AllocStack = make([]binsym.Position, len(g.Object.AllocStack))
	for i, p := range g.Object.AllocStack {
		c.Object.AllocStack[i] = *safePosition(&p)
	}
	return &c
}

func safeHolder(h heap.Holder) heap.Holder {
	e := textsafe.Escape
	h.Status, h.Function, h.Callee, h.Global, h.Detail = e(h.Status), e(h.Function), e(h.Callee), e(h.Global), e(h.Detail)
	h.CreatedBy, h.Location, h.Creator = safePosition(h.CreatedBy), safePosition(h.Location), safePosition(h.Creator)
	return h
}

func safePosition(p *binsym.Position) *binsym.Position {
	if p == nil {
		return nil
	}
	c := *p
	c.Function, c.File = textsafe.Escape(c.Function), textsafe.Escape(c.File)
	return &c
}
