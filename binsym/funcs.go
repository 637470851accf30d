package binsym

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// A Func is a function and a source position in it.
type Func struct {
	// Name is the function's name as the runtime prints it, e.g.
	// "main.(*thumbnailer).loop" or "main.scheduleRetry.func1". For a PC
	// in code that was inlined, it is the physical (outermost) function,
	// the one a heap dump's stack frame names; Frames lists the inlined
	// calls.
	Name string
	// Entry is the function's entry PC.
	Entry uint64
	// PC is the PC whose source position File and Line give: the PC looked
	// up by Func, one less than the return PC for CallSite.
	PC uint64
	// File and Line are the source position of PC: of the innermost
	// inlined function when PC is in inlined code, like a Go traceback.
	File string
	Line int
}

// Func returns the function whose code holds pc and the source position of
// the instruction at pc. Use it for the code pointer of a func value (a
// closure's first word), a function entry, or a PC that is not a return
// address. For return addresses, such as a goroutine's creation PC (gopc) or
// the PC of a stack frame that called another one, use CallSite.
func (b *Binary) Func(pc uint64) (Func, bool) {
	f, ok := b.pcln.findFunc(b.toLink(pc))
	if !ok {
		return Func{}, false
	}
	file, line := b.pcln.fileLine(f, b.toLink(pc))
	return Func{Name: f.name(), Entry: b.toRun(f.entry), PC: pc, File: file, Line: line}, true
}

// CallSite returns the function holding the return address pc and the
// source position of the call that returns there, as a Go traceback prints
// it: the position of pc-1 unless pc is the function's entry (the first
// frame of a goroutine that has not started running). The PCs of a heap
// dump's stack frames and a goroutine's gopc are return addresses.
func (b *Binary) CallSite(pc uint64) (Func, bool) {
	f, ok := b.pcln.findFunc(b.toLink(pc))
	if !ok {
		return Func{}, false
	}
	if b.toLink(pc) > f.entry {
		pc--
	}
	file, line := b.pcln.fileLine(f, b.toLink(pc))
	return Func{Name: f.name(), Entry: b.toRun(f.entry), PC: pc, File: file, Line: line}, true
}

// FuncByName returns the entry of the function named name; File and Line are
// the position of its entry. The first few lookups by name scan the
// functions; the next ones index them by name, once (a few milliseconds
// for a large executable).
func (b *Binary) FuncByName(name string) (Func, bool) {
	entry, ok := b.pcln.entryByName(name)
	if !ok {
		return Func{}, false
	}
	return b.Func(b.toRun(entry))
}

// ArgsSize returns the size in bytes of the argument frame of the function
// whose code holds pc (normally its entry): the pclntab's args, which for a
// register-ABI function covers the spill slots of its register arguments
// and any arguments and results passed on the stack (results returned in
// registers take none). The caller reserves this space at
// MinFrameSize in its own frame, which is why a heap dump shows a callee's
// live arguments in its caller's frame. It returns false for an unknown PC
// and for the few functions whose size is only known at run time
// (reflect's call stubs).
func (b *Binary) ArgsSize(pc uint64) (int64, bool) {
	f, ok := b.pcln.findFunc(b.toLink(pc))
	if !ok || f.args() == argsSizeUnknown || f.args() < 0 {
		return 0, false
	}
	return int64(f.args()), true
}

// A Frame is one logical call in the code at a PC, after inlining is undone:
// where it is, and whether it was inlined into its caller.
type Frame struct {
	Position
	Inlined bool // the call was inlined into its caller
}

// Frames returns the logical calls at pc, innermost first, the way
// runtime.CallersFrames expands inlining: the last frame is always the
// physical function. pc is looked up as given: for a return address, pass
// CallSite(pc).PC. It returns nil for an unknown pc; without a go:func.*
// symbol (a stripped executable) it returns only the physical function.
func (b *Binary) Frames(pc uint64) []Frame {
	t := b.pcln
	lpc := b.toLink(pc)
	f, ok := t.findFunc(lpc)
	if !ok {
		return nil
	}
	var frames []Frame
	var tree uint64
	inl := false
	if off, ok := f.funcdata(funcdataInlTree); ok && t.hasGofunc && f.pcdata(pcdataInlTreeIndex) != 0 {
		tree, inl = t.gofunc+uint64(off), true
	}
	for range maxInlineFrames {
		file, line := t.fileLine(f, lpc)
		ix := int32(-1)
		if inl {
			ix = t.pcvalue(f, f.pcdata(pcdataInlTreeIndex), lpc)
		}
		if ix < 0 {
			return append(frames, Frame{Position: Position{Function: f.name(), File: file, Line: line}})
		}
		rec, ok := b.readLink(tree+uint64(ix)*inlinedCallSize, inlinedCallSize)
		if !ok {
			return append(frames, Frame{Position: Position{Function: f.name(), File: file, Line: line}})
		}
		le := binary.LittleEndian
		name := t.funcName(int32(le.Uint32(rec[4:])))
		parent := int32(le.Uint32(rec[8:]))
		frames = append(frames, Frame{Position: Position{Function: name, File: file, Line: line}, Inlined: true})
		if parent < 0 {
			break // corrupt: end with the physical function
		}
		lpc = f.entry + uint64(parent)
	}
	return append(frames, Frame{Position: Position{Function: f.name(), File: "?"}})
}

// String formats f as "name file:line".
func (f Func) String() string {
	var sb strings.Builder
	sb.WriteString(f.Name)
	if f.File != "" {
		fmt.Fprintf(&sb, " %s:%d", f.File, f.Line)
	}
	return sb.String()
}

// FuncsWithPrefix returns the entries of the functions whose names start
// with prefix ("runtime.AddCleanup[": every instance of a generic
// function), at most max of them, in no particular order.
func (b *Binary) FuncsWithPrefix(prefix string, max int) []uint64 {
	t := b.pcln
	if t == nil {
		return nil
	}
	t.nameOnce.Do(t.indexNames)
	var out []uint64
	for name, e := range t.byName {
		if len(out) >= max {
			break
		}
		if strings.HasPrefix(name, prefix) {
			out = append(out, b.toRun(e))
		}
	}
	return out
}
