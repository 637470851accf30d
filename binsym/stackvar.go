package binsym

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
)

// DWARF operators and location list entry kinds that name a variable's
// stack slot.
const (
	opFbreg       = 0x91 // DW_OP_fbreg: the frame base (the CFA in Go) plus an sleb128
	lleEnd        = 0x00 // DW_LLE_end_of_list
	lleBaseAddrx  = 0x01 // DW_LLE_base_addressx: uleb
	lleStartxEndx = 0x02 // uleb, uleb, expression
	lleStartxLen  = 0x03 // uleb, uleb, expression
	lleOffsetPair = 0x04 // uleb, uleb, expression
	lleDefault    = 0x05 // expression
	lleBaseAddr   = 0x06 // address
	lleStartEnd   = 0x07 // address, address, expression
	lleStartLen   = 0x08 // address, uleb, expression

	// maxLocEntries bounds the entries of one location list read.
	maxLocEntries = 1 << 12
)

// A StackVar is a named local or argument of a function.
type StackVar struct {
	Name  string
	Type  *Type // nil when DWARF does not say
	Param bool  // an argument or a result, not a local
	// Pieces say where the parts of the variable are, for FrameVar: an
	// interface's type word and data word may lie apart, or one in a
	// register. Empty for StackObjectVar's, which lie whole in the frame.
	Pieces []VarPiece
}

// A VarPiece is a part of a variable: Size bytes from Offset in it, at
// CFAOff from the frame base when OnStack, else in a register (or
// optimized away).
type VarPiece struct {
	Offset, Size int64
	CFAOff       int64
	OnStack      bool
}

// StackObjectVar returns the variable that stack object o of the function
// whose entry is given is, from DWARF: the local or argument that always
// lives at the object's place in the frame. frameSize is the size of the
// frame's memory (a dump's frame record: from its SP to its caller's SP).
// It returns false for a compiler's temporary (DWARF leaves them out), and
// without DWARF.
func (b *Binary) StackObjectVar(entry uint64, o *StackObject, frameSize int64) (StackVar, bool) {
	x := b.dwarfTypes()
	if x == nil {
		return StackVar{}, false
	}
	// Go's frame base is the CFA: the caller's SP, the end of the frame's
	// memory. varp is below the return address on x86, and below the saved
	// frame pointer when there is one.
	var cfaOff int64
	if o.Off >= 0 {
		cfaOff = b.MinFrameSize() + o.Off
	} else {
		top := int64(0)
		if b.arch == "amd64" {
			top = 8 // return address
		}
		if frameSize > top && (b.arch == "amd64" || b.arch == "arm64") {
			top += 8 // saved frame pointer
		}
		cfaOff = o.Off - top
	}
	link := b.toLink(entry)
	x.mu.Lock()
	defer x.mu.Unlock()
	off, ok := x.funcs[link]
	if !ok {
		return StackVar{}, false
	}
	key := stackVarKey{link, cfaOff}
	if r, ok := x.vars[key]; ok {
		return r.v, r.ok
	}
	var r stackVarFound
	func() {
		defer func() {
			if recover() != nil {
				r = stackVarFound{} // corrupt DWARF: no name
			}
		}()
		r.v, r.ok = x.stackVar(b, off, cfaOff)
	}()
	if x.vars == nil {
		x.vars = map[stackVarKey]stackVarFound{}
	}
	x.vars[key] = r
	return r.v, r.ok
}

// stackVarKey is a function's link entry and an offset from its frame base.
type stackVarKey struct {
	entry  uint64
	cfaOff int64
}

type stackVarFound struct {
	v  StackVar
	ok bool
}

// stackVar looks among the variables of the subprogram at off, at any
// depth of lexical blocks, for one whose every location is the frame base
// plus cfaOff. Called with x.mu held.
func (x *typeIndex) stackVar(b *Binary, off dwarf.Offset, cfaOff int64) (StackVar, bool) {
	var c *dwarf.Entry
	x.subprogramVars(off, func(v *dwarf.Entry) bool {
		if b.locatedAt(v, cfaOff) {
			c = v
			return false
		}
		return true
	})
	if c == nil {
		return StackVar{}, false
	}
	name, _ := c.Val(dwarf.AttrName).(string)
	var t *Type
	if typ, ok := c.Val(dwarf.AttrType).(dwarf.Offset); ok {
		t = x.build(typ)
		x.finish()
	}
	return StackVar{Name: name, Type: t}, name != ""
}

// subprogramVars calls f with each variable and parameter of the
// subprogram at off, at any depth of lexical blocks and inlined calls,
// until f returns false, an entry cannot be read or maxReadEntries have
// been. f must not move x's
// reader. Called with x.mu held.
func (x *typeIndex) subprogramVars(off dwarf.Offset, f func(*dwarf.Entry) bool) {
	x.r.Seek(off)
	e, err := x.next()
	if err != nil || e == nil || e.Tag != dwarf.TagSubprogram || !e.Children {
		return
	}
	for depth, n := 1, 0; depth > 0 && n < maxReadEntries; n++ {
		c, err := x.next()
		if err != nil || c == nil {
			return
		}
		if c.Tag == 0 {
			depth--
			continue
		}
		if c.Children {
			depth++
		}
		if (c.Tag == dwarf.TagVariable || c.Tag == dwarf.TagFormalParameter) && !f(c) {
			return
		}
	}
}

// locatedAt reports whether every location DWARF gives the variable e is
// the frame base plus cfaOff.
func (b *Binary) locatedAt(e *dwarf.Entry, cfaOff int64) bool {
	f := e.AttrField(dwarf.AttrLocation)
	if f == nil {
		return false
	}
	switch f.Class {
	case dwarf.ClassExprLoc:
		expr, _ := f.Val.([]byte)
		return fbreg(expr, cfaOff)
	case dwarf.ClassLocListPtr:
		loff, ok := f.Val.(int64)
		if !ok || loff < 0 {
			return false
		}
		if data := b.loclists(); data != nil {
			return allFbreg5(data, uint64(loff), cfaOff)
		}
		if data := b.loc(); data != nil {
			return allFbreg4(data, uint64(loff), cfaOff)
		}
	}
	return false
}

// fbreg reports whether expr is DW_OP_fbreg cfaOff and nothing else.
func fbreg(expr []byte, cfaOff int64) bool {
	if len(expr) < 2 || expr[0] != opFbreg {
		return false
	}
	v, n := sleb(expr[1:])
	return n > 0 && 1+n == len(expr) && v == cfaOff
}

func sleb(b []byte) (int64, int) {
	var v int64
	var shift uint
	for i, c := range b {
		if shift >= 64 {
			return 0, 0
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1
		}
	}
	return 0, 0
}

// allFbreg5 reads the DWARF 5 location list at off in .debug_loclists and
// reports whether it has locations and all of them are fbreg cfaOff.
func allFbreg5(data []byte, off uint64, cfaOff int64) bool {
	exprs, all := 0, true
	ended := locList5(data, off, 0, func(e locEntry) bool {
		if !fbreg(e.expr, cfaOff) {
			all = false
			return false
		}
		exprs++
		return true
	})
	return ended && all && exprs > 0
}

// allFbreg4 is allFbreg5 for a DWARF 4 list in .debug_loc: pairs of
// addresses, a base address selection (all ones, then an address), and
// expressions with a 2-byte length.
func allFbreg4(data []byte, off uint64, cfaOff int64) bool {
	exprs := 0
	for range maxLocEntries {
		if off > uint64(len(data)) || uint64(len(data))-off < 16 {
			return false
		}
		lo, hi := binary.LittleEndian.Uint64(data[off:]), binary.LittleEndian.Uint64(data[off+8:])
		off += 16
		switch {
		case lo == 0 && hi == 0:
			return exprs > 0
		case lo == ^uint64(0):
			continue
		}
		if uint64(len(data))-off < 2 {
			return false
		}
		n := uint64(binary.LittleEndian.Uint16(data[off:]))
		off += 2
		if n > uint64(len(data))-off || !fbreg(data[off:off+n], cfaOff) {
			return false
		}
		off += n
		exprs++
	}
	return false
}

// loclists and loc return the executable's location list sections, read
// once (nil if absent or unreadable).
func (b *Binary) loclists() []byte { return b.locSection(".debug_loclists", 0) }
func (b *Binary) loc() []byte      { return b.locSection(".debug_loc", 1) }

func (b *Binary) locSection(name string, i int) []byte {
	b.locOnce[i].Do(func() {
		s := b.elf.Section(name)
		if s == nil {
			s = b.elf.Section(".z" + name[1:])
		}
		if s == nil || s.Type == elf.SHT_NOBITS {
			return
		}
		if data, err := b.sectionData(s); err == nil {
			b.locData[i] = data
		}
	})
	return b.locData[i]
}
