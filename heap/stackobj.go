package heap

import (
	"fmt"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

// fromStackObject types rec, which a pointer in a frame's stack object (an
// address-taken local or argument, see heapdump.RootSlot.StackObject)
// points to: through the variable's DWARF type when the binary names it,
// and the step reads "local v.buf (stack object)"; a compiler's temporary
// has no name: "temporary at +32 (stack object)".
func (t *typer) fromStackObject(c container, root *heapdump.Root, slot heapdump.RootSlot, rec *heapdump.ObjectRecord, interior int64) target {
	a := t.a
	inObj := int64(slot.Offset - slot.StackObjectOffset)
	var v binsym.StackVar
	named := false
	if a.Binary != nil && root.Frame >= 0 && root.Frame < len(a.d.Frames) {
		f := &a.d.Frames[root.Frame]
		v, named = a.Binary.StackObjectVar(f.Entry, slot.StackObject, int64(f.Size))
	}
	kind := "local"
	if slot.StackObject.Off >= 0 {
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
	tt := t.target(c, rec, interior)
	tt.via = fmt.Sprintf("temporary at +%d (stack object)", slot.StackObjectOffset)
	if inObj != 0 {
		tt.via += fmt.Sprintf(" +%d", inObj)
	}
	return tt
}
