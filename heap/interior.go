package heap

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

// interior types object rec of step s, which the step before points into
// s.base bytes from its start: s.t, when known, is the type of the value
// there (a field's). The object's own type is found as the one struct type
// of its size that holds such a value there (binsym.ContainingType); the
// step then names that type, and its Via says which field the pointer
// points to. When nothing is known of it, its offsets count from its start
// and Via says where the pointer points; when only the type of the value
// pointed to is known, the words before it are counted from its start
// (typer.fromObject).
func (t *typer) interior(s *typedStep, rec *heapdump.ObjectRecord) {
	a := t.a
	if s.t != nil && (s.t.Kind == reflect.Array || strings.HasPrefix(s.Type, "[]")) {
		return // a slice's backing array from an element on
	}
	if s.t != nil && a.Binary != nil {
		ptrs := rec.PtrOffsets[:min(len(rec.PtrOffsets), 64)]
		key := fmt.Sprint(s.t.Name, s.base, rec.Size, len(rec.PtrOffsets), ptrs)
		ct, ok := t.containing[key]
		if !ok {
			ct = a.Binary.ContainingType(s.t, s.base, rec.Size, rec.PtrOffsets)
			if t.containing == nil {
				t.containing = map[string]*binsym.Type{}
			}
			t.containing[key] = ct
		}
		if ct != nil {
			s.Via = joinVia(s.Via, "points to "+fieldPath(ct, s.base))
			s.t, s.base, s.Type = ct, 0, ct.Name
			return
		}
	}
	if s.t == nil && s.Type == "" {
		s.Via = joinVia(s.Via, fmt.Sprintf("points to +%d", s.base))
		s.base = 0
	}
}

// joinVia adds a note in parentheses to a step's Via.
func joinVia(via, note string) string {
	if via == "" {
		return "(" + note + ")"
	}
	return via + " (" + note + ")"
}

// fieldPath names the field of t at offset off: ".state", ".conns[2].state".
// It descends at most 100 levels.
func fieldPath(t *binsym.Type, off int64) string {
	var b strings.Builder
	for depth := 0; depth < 100 && t != nil && off > 0; depth++ {
		switch t.Kind {
		case reflect.Array:
			if t.Elem == nil || t.Elem.Size <= 0 {
				return b.String()
			}
			i := off / t.Elem.Size
			b.WriteString("[" + strconv.FormatInt(i, 10) + "]")
			t, off = t.Elem, off-i*t.Elem.Size
		case reflect.Struct:
			var next *binsym.Type
			for i := len(t.Fields) - 1; i >= 0; i-- {
				f := t.Fields[i]
				if f.Type != nil && f.Offset <= off && (off-f.Offset < f.Type.Size || f.Offset == off) {
					b.WriteString("." + f.Name)
					next, off = f.Type, off-f.Offset
					break
				}
			}
			t = next
		default:
			b.WriteString(fmt.Sprintf("+%d", off))
			return b.String()
		}
	}
	return b.String()
}

// argsType returns the layout of the arguments of the function of frame
// root r, which its caller's frame holds, and the offset of frame offset o
// in it; nil when the executable does not tell.
func (t *typer) argsType(r *heapdump.Root, o int64) (*binsym.Type, int64) {
	a := t.a
	if a.Binary == nil || r.Frame < 0 || r.Frame >= len(a.d.Frames) {
		return nil, o
	}
	entry := a.d.Frames[r.Frame].Entry
	at, ok := t.args[entry]
	if !ok {
		at = a.Binary.ArgsType(entry)
		if t.args == nil {
			t.args = map[uint64]*binsym.Type{}
		}
		t.args[entry] = at
	}
	if at == nil {
		return nil, o
	}
	return at, o - a.Binary.MinFrameSize()
}
