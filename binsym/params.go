package binsym

import (
	"debug/dwarf"
	"reflect"
	"strings"
)

// ArgsType returns the layout of the arguments of the function whose entry
// is given, as its caller's frame holds them for the call (the register
// ABI's spill space, which a dump's frame record of the caller covers): a
// struct named "arguments of F" whose fields are the parameters in order,
// each at its alignment. It returns nil without DWARF, when DWARF does not
// list the parameters, or when a parameter may be assigned to the stack
// (an array of more than one element, or more than 9 integer or 15
// floating-point registers' worth), where the layout differs, and for a
// function of generic shape, whose dictionary argument DWARF leaves out.
func (b *Binary) ArgsType(entry uint64) *Type {
	x := b.dwarfTypes()
	if x == nil {
		return nil
	}
	fn, ok := b.Func(entry)
	if !ok || fn.Entry != entry || strings.Contains(fn.Name, "go.shape.") {
		// A function of generic shape takes its dictionary first, as an
		// argument DWARF does not list.
		return nil
	}
	off, ok := x.funcs[b.toLink(entry)]
	if !ok {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var t *Type
	defer x.recoverCorrupt(&t)
	_, kids, err := x.read(off)
	if err != nil {
		return nil
	}
	var fields []Field
	for _, c := range kids {
		if c.Tag != dwarf.TagFormalParameter {
			continue
		}
		src := c
		if origin, ok := c.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
			if o, _, err := x.read(origin); err == nil {
				src = o
			}
		}
		if result, _ := src.Val(dwarf.AttrVarParam).(bool); result {
			continue // a result: no spill space
		}
		name, _ := src.Val(dwarf.AttrName).(string)
		typ, ok := src.Val(dwarf.AttrType).(dwarf.Offset)
		if !ok {
			return nil
		}
		fields = append(fields, Field{Name: name, Type: x.build(typ)})
	}
	x.finish()
	ints, floats := 0, 0
	size := int64(0)
	for i := range fields {
		ft := fields[i].Type
		if ft == nil || ft.Size < 0 {
			return nil
		}
		n, f, ok := registers(ft)
		if !ok {
			return nil
		}
		ints, floats = ints+n, floats+f
		al := ft.Align()
		size = (size + al - 1) / al * al
		fields[i].Offset = size
		size += ft.Size
	}
	if ints > 9 || floats > 15 || len(fields) == 0 {
		return nil
	}
	t = &Type{Name: "arguments of " + fn.Name, Kind: reflect.Struct, Size: (size + 7) &^ 7, Fields: fields}
	return t
}

// registers counts the integer and floating-point registers a value of
// type t takes in the register ABI, false when it goes to the stack.
// It walks t iteratively, at most 64 types.
func registers(t *Type) (ints, floats int, ok bool) {
	stack := []*Type{t}
	for n := 0; len(stack) > 0; n++ {
		if n > 64 {
			return 0, 0, false
		}
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t == nil {
			return 0, 0, false
		}
		switch t.Kind {
		case reflect.Float32, reflect.Float64:
			floats++
		case reflect.Complex64, reflect.Complex128:
			floats += 2
		case reflect.String, reflect.Interface:
			ints += 2
		case reflect.Slice:
			ints += 3
		case reflect.Array:
			switch {
			case t.Len == 0:
			case t.Len == 1:
				stack = append(stack, t.Elem)
			default:
				return 0, 0, false
			}
		case reflect.Struct:
			for _, f := range t.Fields {
				stack = append(stack, f.Type)
			}
		default:
			if t.Size > 8 {
				return 0, 0, false
			}
			ints++
		}
	}
	return ints, floats, true
}

// Align estimates the alignment of t: that of the largest scalar it is
// made of, at most 8; 1 for a nil type. It walks t iteratively, each type
// once, so that a type made to contain itself (in a corrupt executable)
// ends the walk instead of overflowing the stack.
func (t *Type) Align() int64 {
	al := int64(1)
	seen := map[*Type]bool{}
	stack := []*Type{t}
	for len(stack) > 0 && al < 8 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t == nil || seen[t] {
			continue
		}
		seen[t] = true
		switch t.Kind {
		case reflect.Bool, reflect.Int8, reflect.Uint8:
		case reflect.Int16, reflect.Uint16:
			al = max(al, 2)
		case reflect.Int32, reflect.Uint32, reflect.Float32:
			al = max(al, 4)
		case reflect.Array:
			stack = append(stack, t.Elem)
		case reflect.Struct:
			for _, f := range t.Fields {
				stack = append(stack, f.Type)
			}
		default:
			al = 8
		}
	}
	return al
}
