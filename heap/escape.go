package heap

import (
	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// Names in a Group come from the dump and the executable (types, functions,
// files, globals, fields, wait reasons), both of which may be hostile: a
// name with a control character could move a terminal's cursor or start a
// line of its own in a CI log. The renderers (Text, Short, WriteText, JSON)
// escape them with textsafe.Escape; a caller that prints a Group's fields
// itself takes them from Escaped.

// Escaped returns a copy of g whose names have their control characters,
// invalid UTF-8 and hidden characters escaped (textsafe.Escape). It is
// idempotent.
func (g *Group) Escaped() *Group {
	c := *g
	c.Root = c.Root.escaped()
	c.OtherRoots = mapSlice(g.OtherRoots, Holder.escaped)
	c.HeldBy = mapSlice(g.HeldBy, textsafe.Escape)
	c.Path = mapSlice(g.Path, Step.escaped)
	c.Inside = mapSlice(g.Inside, Step.escaped)
	c.MadeOf = mapSlice(g.MadeOf, Part.escaped)
	c.Object = c.Object.escaped()
	if m := g.Mechanism; m != nil {
		e := *m
		e.Kind, e.Function = textsafe.Escape(e.Kind), textsafe.Escape(e.Function)
		c.Mechanism = &e
	}
	return &c
}

func (h Holder) escaped() Holder {
	e := textsafe.Escape
	h.Status, h.Function, h.Callee, h.Global, h.Detail = e(h.Status), e(h.Function), e(h.Callee), e(h.Global), e(h.Detail)
	h.CreatedBy, h.Location, h.Creator = escapedPosition(h.CreatedBy), escapedPosition(h.Location), escapedPosition(h.Creator)
	return h
}

func (s Step) escaped() Step {
	s.Via, s.Type = textsafe.Escape(s.Via), textsafe.Escape(s.Type)
	return s
}

func (p Part) escaped() Part {
	p.Type, p.AllocSite = textsafe.Escape(p.Type), escapedPosition(p.AllocSite)
	return p
}

func (o Object) escaped() Object {
	o.Type = textsafe.Escape(o.Type)
	o.AllocSite = escapedPosition(o.AllocSite)
	o.AllocStack = mapSlice(o.AllocStack, func(p binsym.Position) binsym.Position { return *escapedPosition(&p) })
	return o
}

// escapedPosition returns a copy of p with its function and file names
// escaped, or nil.
func escapedPosition(p *binsym.Position) *binsym.Position {
	if p == nil {
		return nil
	}
	c := *p
	c.Function, c.File = textsafe.Escape(c.Function), textsafe.Escape(c.File)
	return &c
}

// mapSlice returns f of each element of s, nil for nil.
func mapSlice[T any](s []T, f func(T) T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}
