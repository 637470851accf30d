package binsym

import (
	"debug/dwarf"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
)

// More DWARF operators of the locations Go writes for variables.
const (
	opReg0         = 0x50 // DW_OP_reg0 .. DW_OP_reg31: 0x50..0x6f
	opReg31        = 0x6f
	opRegx         = 0x90 // uleb
	opPiece        = 0x93 // uleb: the size of the piece just described
	opCallFrameCFA = 0x9c // the CFA itself: an argument in the caller's frame
)

// FrameVar returns the local or argument of the function whose entry is
// given that, while the function is at pc, lives at cfaOff bytes from its
// frame base (the CFA: for a slot of a dump's frame record, its offset
// minus the record's size), and the offset of that slot in the variable: a
// variable of several words (an interface, a slice) may have one piece on
// the stack and another in a register. pc is a return address for every
// frame but the innermost, as a dump's frames give it; the location that
// holds is the one of the call before it. It returns false without DWARF,
// for a compiler's temporary and for a slot no variable is at.
func (b *Binary) FrameVar(entry, pc uint64, cfaOff int64) (StackVar, int64, bool) {
	x := b.dwarfTypes()
	if x == nil || pc <= entry {
		return StackVar{}, 0, false
	}
	link := b.toLink(entry)
	// The call instruction before the return address: its location is
	// the one that holds while the callee runs.
	at := b.toLink(pc) - 1
	x.mu.Lock()
	defer x.mu.Unlock()
	off, ok := x.funcs[link]
	if !ok {
		return StackVar{}, 0, false
	}
	key := frameVarKey{link, at, cfaOff}
	if r, ok := x.frameVars[key]; ok {
		return r.v, r.in, r.ok
	}
	var r frameVarFound
	func() {
		defer func() {
			if recover() != nil {
				r = frameVarFound{} // corrupt DWARF: no name
			}
		}()
		r = x.frameVar(b, off, link, at, cfaOff)
	}()
	if x.frameVars == nil {
		x.frameVars = map[frameVarKey]frameVarFound{}
	}
	if len(x.frameVars) < maxFrameVars {
		x.frameVars[key] = r
	}
	return r.v, r.in, r.ok
}

// maxFrameVars bounds the lookups FrameVar keeps.
const maxFrameVars = 1 << 16

type frameVarKey struct {
	entry, pc uint64
	cfaOff    int64
}

type frameVarFound struct {
	v  StackVar
	in int64
	ok bool
}

// frameVar looks among the variables of the subprogram at off (whose link
// entry is entry) for the one at cfaOff when the function is at link
// address pc, those of functions inlined into it included. Called with
// x.mu held.
func (x *typeIndex) frameVar(b *Binary, off dwarf.Offset, entry, pc uint64, cfaOff int64) frameVarFound {
	// First the variables that have a location on the stack at pc, then
	// their names and types: reading those moves the reader.
	type candidate struct {
		e    *dwarf.Entry
		expr []byte
	}
	var cands []candidate
	var parts ifaceParts
	x.subprogramVars(off, func(c *dwarf.Entry) bool { // those read before an error still count
		expr, ok := b.locationAt(c, entry, pc)
		if ok && onStackNear(expr, cfaOff) && len(cands) < maxFrameCandidates {
			cands = append(cands, candidate{c, expr})
		}
		parts.add(c, expr, ok)
		return true
	})
	for _, cd := range cands {
		src := cd.e
		if origin, ok := src.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
			if o, _, err := x.read(origin); err == nil && o != nil {
				src = o
			}
		}
		name, _ := src.Val(dwarf.AttrName).(string)
		if name == "" || name[0] == '.' {
			continue // a compiler's temporary
		}
		var t *Type
		size := int64(-1)
		if typ, ok := src.Val(dwarf.AttrType).(dwarf.Offset); ok {
			t = x.build(typ)
			x.finish()
			if t != nil {
				size = t.Size
			}
		}
		if base, ok := strings.CutSuffix(name, ".data"); ok {
			if r, ok := x.joinIface(&parts, base, cd.expr, cfaOff); ok {
				return r
			}
		}
		if in, ps, ok := pieces(cd.expr, cfaOff, size); ok {
			return frameVarFound{v: StackVar{Name: name, Type: t, Param: cd.e.Tag == dwarf.TagFormalParameter, Pieces: ps}, in: in, ok: true}
		}
	}
	return frameVarFound{}
}

// ifaceParts holds what joinIface needs of a subprogram's variables: Go
// 1.27 may describe an interface variable x as the words "x.itab" (or
// "x.type") and "x.data", a uintptr and a *uint8 of their own, beside x.
type ifaceParts struct {
	tabs  map[string][]byte       // location at pc of each "x.itab" and "x.type", nil if none
	types map[string]dwarf.Offset // the type of each other named variable
}

func (p *ifaceParts) add(c *dwarf.Entry, expr []byte, located bool) {
	name, _ := c.Val(dwarf.AttrName).(string)
	if name == "" || len(p.tabs)+len(p.types) >= maxIfaceParts {
		return
	}
	if strings.HasSuffix(name, ".itab") || strings.HasSuffix(name, ".type") {
		if p.tabs == nil {
			p.tabs = map[string][]byte{}
		}
		if !located {
			expr = nil
		}
		p.tabs[name] = expr
	} else if t, ok := c.Val(dwarf.AttrType).(dwarf.Offset); ok {
		if p.types == nil {
			p.types = map[string]dwarf.Offset{}
		}
		p.types[name] = t
	}
}

// joinIface returns the interface variable base whose data word
// "base.data" is at cfaOff, where dataExpr says, joined with its type
// word (in a register when its location is not on the stack), typed as
// base is; false when base has no separate type word. Called with x.mu
// held.
func (x *typeIndex) joinIface(p *ifaceParts, base string, dataExpr []byte, cfaOff int64) (frameVarFound, bool) {
	dataAt, ok := fbregOnly(dataExpr)
	if !ok || dataAt != cfaOff {
		return frameVarFound{}, false
	}
	tab, ok := p.tabs[base+".itab"]
	if !ok {
		if tab, ok = p.tabs[base+".type"]; !ok {
			return frameVarFound{}, false
		}
	}
	tabAt, tabOnStack := fbregOnly(tab)
	var t *Type
	if off, ok := p.types[base]; ok {
		t = x.build(off)
		x.finish()
		if t != nil && (t.Kind != reflect.Interface || t.Size != 16) {
			t = nil
		}
	}
	ps := []VarPiece{{Offset: 0, Size: 8, CFAOff: tabAt, OnStack: tabOnStack}, {Offset: 8, Size: 8, CFAOff: dataAt, OnStack: true}}
	return frameVarFound{v: StackVar{Name: base, Type: t, Pieces: ps}, in: 8, ok: true}, true
}

// fbregOnly returns the offset of the location expr that is one
// DW_OP_fbreg and nothing else.
func fbregOnly(expr []byte) (int64, bool) {
	n, at := 0, int64(0)
	ok := locOps(expr, func(op byte, v int64) bool {
		n++
		at = v
		return op == opFbreg
	})
	return at, ok && n == 1 && len(expr) > 0 && expr[0] == opFbreg
}

// maxIfaceParts bounds the variables ifaceParts keeps for one lookup.
const maxIfaceParts = 1 << 10

// maxFrameCandidates bounds the variables frameVar names for one slot.
const maxFrameCandidates = 64

// onStackNear reports whether the location expr has a part on the stack at
// or below cfaOff, which may hold it.
func onStackNear(expr []byte, cfaOff int64) bool {
	near := false
	locOps(expr, func(op byte, v int64) bool {
		switch op {
		case opFbreg:
			near = v <= cfaOff
		case opCallFrameCFA:
			near = cfaOff >= 0
		}
		return !near
	})
	return near
}

// locOps calls fn with each operator of the location expression expr, in
// order, and its operand: the sleb128 offset of DW_OP_fbreg, the size of
// DW_OP_piece (math.MaxInt64 past it), 0 for the others. It stops when fn
// returns false. It reports false when expr is malformed or has an
// operator other than fbreg, call_frame_cfa, a register and piece: an
// expression that computes more than a place.
func locOps(expr []byte, fn func(op byte, v int64) bool) bool {
	for p := expr; len(p) > 0; {
		op := p[0]
		p = p[1:]
		var v int64
		switch {
		case op == opFbreg:
			off, n := sleb(p)
			if n == 0 {
				return false
			}
			p = p[n:]
			v = off
		case op == opRegx || op == opPiece:
			u, n := binary.Uvarint(p)
			if n <= 0 {
				return false
			}
			p = p[n:]
			if op == opPiece {
				v = int64(min(u, math.MaxInt64))
			}
		case op == opCallFrameCFA, op >= opReg0 && op <= opReg31:
		default:
			return false
		}
		if !fn(op, v) {
			return true
		}
	}
	return true
}

// locationAt returns the location expression of variable e that holds at
// link address pc, false when DWARF gives none there.
func (b *Binary) locationAt(e *dwarf.Entry, entry, pc uint64) ([]byte, bool) {
	f := e.AttrField(dwarf.AttrLocation)
	if f == nil {
		return nil, false
	}
	switch f.Class {
	case dwarf.ClassExprLoc:
		expr, ok := f.Val.([]byte)
		return expr, ok
	case dwarf.ClassLocListPtr:
		loff, ok := f.Val.(int64)
		if !ok || loff < 0 {
			return nil, false
		}
		if data := b.loclists(); data != nil {
			return locList5At(data, uint64(loff), entry, pc)
		}
	}
	return nil, false
}

// locList5At reads the DWARF 5 location list at off in .debug_loclists
// and returns the expression of its entry that covers link address pc
// (see locList5 for entry).
func locList5At(data []byte, off, entry, pc uint64) ([]byte, bool) {
	var expr []byte
	found := false
	locList5(data, off, entry, func(e locEntry) bool {
		if e.known && e.lo <= pc && pc < e.hi {
			expr, found = e.expr, true
			return false
		}
		return true
	})
	return expr, found
}

// pieceAt reports whether the location expr puts a word of the variable at
// cfaOff from the frame base, and at which offset in the variable: expr is
// a sequence of locations each followed by DW_OP_piece, or one location
// for a variable of size bytes (-1 when unknown: one word).
func pieceAt(expr []byte, cfaOff, size int64) (int64, bool) {
	in, _, ok := pieces(expr, cfaOff, size)
	return in, ok
}

// pieces is pieceAt that also returns where each piece of the variable is.
func pieces(expr []byte, cfaOff, size int64) (int64, []VarPiece, bool) {
	var ps []VarPiece
	var in int64 // the offset in the variable of the piece being read
	at, onStack := int64(0), false
	found, foundIn := false, int64(0)
	bad := false
	ok := locOps(expr, func(op byte, v int64) bool {
		switch {
		case op == opFbreg:
			at, onStack = v, true
		case op == opCallFrameCFA:
			at, onStack = 0, true
		case op == opPiece:
			if v > 1<<20 || len(ps) >= 64 {
				bad = true
				return false
			}
			ps = append(ps, VarPiece{Offset: in, Size: v, CFAOff: at, OnStack: onStack})
			if onStack && !found && at <= cfaOff && cfaOff < at+v {
				found, foundIn = true, in+cfaOff-at
			}
			in += v
			onStack = false
		default: // a register
			onStack = false
		}
		return true
	})
	if !ok || bad {
		return 0, nil, false // malformed, or an expression more than a place
	}
	if len(ps) > 0 {
		return foundIn, ps, found
	}
	if !onStack {
		return 0, nil, false
	}
	if size <= 0 {
		size = 8
	}
	if at <= cfaOff && cfaOff < at+size {
		return cfaOff - at, []VarPiece{{Offset: 0, Size: size, CFAOff: at, OnStack: true}}, true
	}
	return 0, nil, false
}
