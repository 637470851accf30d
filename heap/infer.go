package heap

import (
	"encoding/binary"
	"fmt"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

// inferBack types the objects of steps that typing from the root left
// untyped (a compiler's temporary pointed to them), from the step after
// each: the field that points to it tells the object's type when one
// struct type of the object's size has such a field there
// (binsym.ContainingType): an interface field, whose itab names the
// interface (a context.Context at +248 of 320 bytes: a net/http.Request),
// or a pointer to the next step's type. The next step's Via is then the
// field's name. It goes from the end back, so that one typed object can
// type the one before it.
func (t *typer) inferBack(steps []typedStep) {
	a := t.a
	if a.Binary == nil {
		return
	}
	for i := len(steps) - 2; i >= 0; i-- {
		s, next := &steps[i], &steps[i+1]
		if s.t != nil || s.Type != "" || s.closure != nil || s.node == heapdump.NoNode || next.node == heapdump.NoNode {
			continue
		}
		var rec *heapdump.ObjectRecord
		if m, ok := t.memo[s.node]; ok {
			rec = m.rec
		} else {
			var err error
			if rec, err = t.record(s.node, recordContents); err != nil {
				continue
			}
		}
		na, nsize := a.g.ObjectAddr(next.node), a.g.Size(next.node)
		for _, o := range rec.PtrOffsets {
			w := rec.Word(int64(o))
			if w < na || w-na >= nsize {
				continue
			}
			field, start := t.fieldAt(rec, int64(o), next)
			if field == nil {
				continue
			}
			ct := t.containingType(field, start, rec)
			if ct == nil {
				continue
			}
			s.t, s.base, s.Type = ct, 0, ct.Name
			if path, ft, _ := ct.PointerAt(int64(o)); ft != nil {
				next.Via = path
			}
			if m, ok := t.memo[s.node]; ok {
				m.s = *s
				t.memo[s.node] = m
			}
			break
		}
	}
}

// fieldAt returns the type of the field of rec whose pointer word at
// offset o points to the object of step next, and the field's offset: the
// interface its itab names when the word before it is an itab or a type
// descriptor (the field starts there), else a pointer to next's type; nil
// when neither is known.
func (t *typer) fieldAt(rec *heapdump.ObjectRecord, o int64, next *typedStep) (*binsym.Type, int64) {
	a := t.a
	ps := int64(a.d.Params.PtrSize)
	if o >= ps {
		if tw := rec.Word(o - ps); tw != 0 {
			if _, inHeap := a.g.Find(tw); !inHeap {
				if it := t.ifaceOf(tw); it != nil {
					return it, o - ps
				}
			}
		}
	}
	if next.t != nil && next.base == 0 && next.t.Name != "" {
		return a.Binary.TypeByName("*" + next.t.Name), o
	}
	return nil, 0
}

// ifaceOf returns the interface type of the itab at w (its first word
// points to the interface's type descriptor), or the empty interface when
// w is a type descriptor; nil otherwise. Only itabs the executable holds
// (made by the compiler) can be read.
func (t *typer) ifaceOf(w uint64) *binsym.Type {
	a := t.a
	if _, ok := a.Binary.ItabType(w); ok {
		b, ok := a.Binary.ReadData(w, 8)
		if !ok {
			return nil
		}
		it := a.Binary.TypeAt(binary.LittleEndian.Uint64(b))
		if it == nil || it.Name == "" {
			return nil
		}
		return it
	}
	if _, ok := a.d.Itabs[w]; ok {
		return nil // an itab made at run time: its interface is not in the dump
	}
	if a.Binary.TypeAt(w) != nil {
		return a.Binary.TypeByName("interface {}")
	}
	return nil
}

// containingType is binsym.ContainingType for the object of rec, with its
// answers kept.
func (t *typer) containingType(field *binsym.Type, off int64, rec *heapdump.ObjectRecord) *binsym.Type {
	ptrs := rec.PtrOffsets[:min(len(rec.PtrOffsets), 64)]
	key := fmt.Sprint(field.Name, off, rec.Size, len(rec.PtrOffsets), ptrs)
	ct, ok := t.containing[key]
	if !ok {
		ct = t.a.Binary.ContainingType(field, off, rec.Size, rec.PtrOffsets)
		if t.containing == nil {
			t.containing = map[string]*binsym.Type{}
		}
		t.containing[key] = ct
	}
	return ct
}
