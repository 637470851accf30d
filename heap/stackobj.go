package heap

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

// fromStackObject types rec, which a pointer in a frame's stack object (an
// address-taken local or argument, see heapdump.Graph.StackObject)
// points to: through the variable's DWARF type when the binary names it,
// and the step reads "local v.buf (stack object)"; a compiler's temporary
// has no name: "temporary at +32 (stack object)".
func (t *typer) fromStackObject(c container, root *heapdump.Root, slot heapdump.RootSlot, rec *heapdump.ObjectRecord, interior int64) target {
	a := t.a
	so := a.g.StackObject(&slot)
	inObj := int64(slot.Offset - slot.StackObjectOffset)
	var v binsym.StackVar
	named := false
	if a.Binary != nil && root.Frame >= 0 && root.Frame < len(a.d.Frames) {
		f := &a.d.Frames[root.Frame]
		v, named = a.Binary.StackObjectVar(f.Entry, so, int64(f.Size))
	}
	kind := "local"
	if so.Off >= 0 {
		kind = "argument"
	}
	if named {
		c.t, c.off = v.Type, inObj
		tt := t.target(c, rec, interior)
		path := tt.via
		if v.Type == nil && inObj != 0 {
			path = fmt.Sprintf("+%d", inObj)
		}
		tt.via = fmt.Sprintf("%s %s%s (stack object)", kind, v.Name, path)
		return tt
	}
	c.off = inObj
	if ct := a.stackClosure(c, slot, inObj); ct != nil {
		// A closure the frame made on its stack: a deferred call's
		// (deferwrap, whose captured variables DWARF does not list), or
		// a func value that does not escape.
		what := "closure"
		if len(ct.Fields) > 1 {
			c.t = ct
		}
		if strings.Contains(ct.Name, ".deferwrap") {
			what = "deferred call"
		}
		tt := t.target(c, rec, interior)
		path := tt.via
		if c.t == nil {
			path = fmt.Sprintf(" +%d", inObj)
		}
		tt.via = fmt.Sprintf("%s %s%s (stack object at +%d)", what, ct.Name, path, slot.StackObjectOffset)
		return tt
	}
	if sent := a.sentType(root, slot); sent != nil {
		c.t = sent
		tt := t.target(c, rec, interior)
		what := "value sent"
		if strings.HasSuffix(sent.Name, "]runtime.scase") {
			what = "cases of the select"
		}
		tt.via = fmt.Sprintf("%s %s%s (stack object at +%d)", what, typeName(sent), tt.via, slot.StackObjectOffset)
		return tt
	}
	tt := t.target(c, rec, interior)
	tt.via = fmt.Sprintf("temporary at +%d (stack object)", slot.StackObjectOffset)
	if inObj != 0 {
		tt.via += fmt.Sprintf(" +%d", inObj)
	}
	return tt
}

// stackClosure returns the type of the unnamed stack object of slot (of
// which the slot is inObj bytes in) when it is a closure: its first word is
// the entry of a function whose captured variables fit in it (with no
// fields past the code pointer when DWARF does not list them). It returns
// nil otherwise.
func (a *Analysis) stackClosure(c container, slot heapdump.RootSlot, inObj int64) *binsym.Type {
	so := a.g.StackObject(&slot)
	if a.Binary == nil || inObj <= 0 || so.Size < 16 {
		return nil
	}
	code := c.word(-inObj)
	if code == 0 {
		return nil
	}
	if _, heap := a.g.Find(code); heap {
		return nil
	}
	fn, ok := a.Binary.Func(code)
	if !ok || fn.Entry != code {
		return nil
	}
	ct := a.Binary.ClosureType(code)
	if ct == nil || ct.Size > int64(so.Size) {
		return nil
	}
	return ct
}

// sentType returns the type of the stack object of slot when it is the
// value a blocked `ch <- v` or select of the root's goroutine is sending (a
// compiler's temporary, which DWARF does not name): runtime.chansend's
// arguments c and ep, in its caller's frame, are the channel and a pointer
// into the object, and the channel's element type is its type; for
// runtime.selectgo, its argument cas0 points to the select's cases, each a
// channel and a pointer to the value. It returns nil otherwise.
func (a *Analysis) sentType(root *heapdump.Root, slot heapdump.RootSlot) *binsym.Type {
	bin := a.Binary
	if bin == nil || root.Goroutine < 0 || root.Goroutine >= len(a.d.Goroutines) {
		return nil
	}
	gr := &a.d.Goroutines[root.Goroutine]
	objAddr := a.d.Frames[slot.Frame].SP + slot.StackObjectOffset
	size := uint64(a.g.StackObject(&slot).Size)
	ps := uint64(a.d.Params.PtrSize)
	mf := uint64(bin.MinFrameSize())
	in := func(p uint64) bool { return p >= objAddr && p-objAddr < size }
	for d := 1; d < gr.NumFrames; d++ {
		fi := gr.FirstFrame + d
		callee := a.d.FrameFunc(fi - 1)
		if callee != "runtime.chansend" && callee != "runtime.selectgo" {
			continue
		}
		var arg0, arg1 uint64
		for _, s := range a.d.FrameSlots(fi) {
			switch s.Offset {
			case mf:
				arg0 = s.Value
			case mf + ps:
				arg1 = s.Value
			}
		}
		if callee == "runtime.chansend" {
			if in(arg1) {
				return a.chanElemType(arg0, size)
			}
			continue
		}
		if arg0 == objAddr {
			if t := a.selectCases(size); t != nil {
				return t // the cases themselves
			}
		}
		// The cases lie in the selecting frame: read them up to its end.
		f := &a.d.Frames[fi]
		if arg0 < f.SP || arg0 >= f.SP+f.Size {
			continue
		}
		for off := arg0 - f.SP; off+2*ps <= f.Size; off += 2 * ps {
			if in(a.g.FrameWord(fi, int64(off+ps))) {
				return a.chanElemType(a.g.FrameWord(fi, int64(off)), size)
			}
		}
	}
	return nil
}

// selectCases returns the type of a select's cases, [n]runtime.scase of
// size bytes, or nil when the executable does not describe runtime.scase.
func (a *Analysis) selectCases(size uint64) *binsym.Type {
	sc := a.Binary.TypeByName("runtime.scase")
	if sc == nil || sc.Size <= 0 || size%uint64(sc.Size) != 0 {
		return nil
	}
	n := int64(size / uint64(sc.Size))
	return &binsym.Type{Name: fmt.Sprintf("[%d]runtime.scase", n), Kind: reflect.Array, Size: int64(size), Elem: sc, Len: n}
}

// chanElemType returns the element type of the channel whose runtime.hchan
// is at addr, if it is size bytes.
func (a *Analysis) chanElemType(addr, size uint64) *binsym.Type {
	hchan := a.Binary.TypeByName("runtime.hchan")
	v, ok := a.g.Find(addr)
	if hchan == nil || !ok {
		return nil
	}
	i := slices.IndexFunc(hchan.Fields, func(f binsym.Field) bool { return f.Name == "elemtype" })
	if i < 0 || hchan.Fields[i].Offset < 0 {
		return nil
	}
	off := hchan.Fields[i].Offset
	rec, err := a.g.ObjectRecord(v, 8) // Word reads the field
	if err != nil || rec.Addr != addr || uint64(off)+uint64(a.d.Params.PtrSize) > rec.Size {
		return nil
	}
	t := a.Binary.TypeAt(rec.Word(off))
	if t == nil || uint64(t.Size) != size {
		return nil
	}
	return t
}
