package binsym

import (
	"debug/dwarf"
	"reflect"
	"sort"
	"strings"
)

// TypeAt returns the type whose runtime type descriptor is at addr: the
// first word of an empty interface, the Type of an itab (ItabType), or the
// address in a dump's type record. It returns nil if there is no type
// there.
//
// Types come from DWARF when the executable has it, or else from the
// runtime type descriptors, which every Go executable keeps: `go run`,
// `go test` and many release builds link with -s -w. Decoding a type
// decodes the types it is made of, and the first map or channel type met
// also finds the runtime's own types for Header by walking every
// descriptor: the first context type of a stripped cmd/go (14 MB) takes
// about 7 ms, most of it the walk, and the next ones take microseconds. A
// type from descriptors has the same name, kind, size, elements, key,
// length and fields as DWARF's, and strings and slices have the fields
// DWARF gives them, but:
//   - internal types have no "noalg." prefix;
//   - Header's fields are those of the runtime's map and channel types,
//     whose pointers to the tables, buffers and queues are untyped;
//   - the pointer types of strings' and slices' fields have no
//     descriptor (TypeAddr returns false), nor do Headers.
//
// GlobalType and ClosureType need DWARF.
func (b *Binary) TypeAt(addr uint64) *Type {
	if x := b.dwarfTypes(); x != nil {
		off, ok := x.byRT[b.toLink(addr)-x.types]
		if !ok {
			return nil
		}
		return x.get(off)
	}
	if d := b.descIndex(); d != nil {
		return d.typeAt(b.toLink(addr))
	}
	return nil
}

// TypeByName returns the type named name, as Type.Name gives it (for
// example "context.valueCtx", "*main.Upload", "[]uint8"), or nil. Package
// paths are written in full: "internal/runtime/maps.Map".
//
// Without DWARF it finds the types whose descriptors are reachable from the
// module's tables of unnamed types and itabs, following elements, fields,
// parameters and methods, which is most of them, and any type TypeAt has
// returned; its first call decodes them all (about 40 ms for cmd/go).
func (b *Binary) TypeByName(name string) *Type {
	x := b.dwarfTypes()
	if x == nil {
		if d := b.descIndex(); d != nil {
			return d.typeByName(name)
		}
		return nil
	}
	off, ok := x.byName[name]
	if !ok {
		return nil
	}
	return x.get(off)
}

// TypeAddr returns the run-time address of t's type descriptor, if the
// executable has one.
func (b *Binary) TypeAddr(t *Type) (uint64, bool) {
	if t == nil || t.rt == 0 {
		return 0, false
	}
	return b.toRun(t.rt), true
}

// GlobalType returns the type of the global variable named name (as the
// symbol table names it, e.g. "main.cache"), or nil. It needs DWARF.
func (b *Binary) GlobalType(name string) *Type {
	x := b.dwarfTypes()
	if x == nil {
		return nil
	}
	off, ok := x.global[name]
	if !ok {
		return nil
	}
	return x.get(off)
}

// ClosureType returns the layout of a func value object whose first word is
// the code pointer code, as a struct type named after the function (e.g.
// "main.scheduleRetry.func1"): the field F (the code pointer) at
// offset 0, then the captured variables at the offsets DWARF records for
// them (Go 1.23 and later). A variable captured by reference is named "&x"
// and has a pointer type. DWARF omits some captured variables (one only
// read into a register, for example): PointerAt finds no field for their
// words, and Size ends with the last known one. It returns nil if code is
// not a function's entry or the executable has no DWARF.
func (b *Binary) ClosureType(code uint64) *Type {
	x := b.dwarfTypes()
	if x == nil {
		return nil
	}
	fn, ok := b.Func(code)
	if !ok || fn.Entry != code {
		return nil
	}
	entry := b.toLink(code)
	var recv *Type // a method value's receiver (read before x.mu is held)
	if r := methodValueReceiver(fn.Name); r != "" {
		recv = b.TypeByName(r)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if t, ok := x.closures[entry]; ok {
		return t
	}
	var t *Type
	defer x.recoverCorrupt(&t)
	uintptrType := x.buildNamed("uintptr")
	t = &Type{Name: fn.Name, Kind: reflect.Struct, Size: 8}
	t.Fields = append(t.Fields, Field{Name: "F", Offset: 0, Type: uintptrType})
	if off, ok := x.funcs[entry]; ok {
		t.Fields = append(t.Fields, x.closureVars(off)...)
	}
	if len(t.Fields) == 1 && recv != nil && recv.Size > 0 {
		// A method value (x.m) is a closure of the wrapper m-fm, which
		// DWARF gives no captured variables: it holds the receiver after
		// the code pointer.
		t.Fields = append(t.Fields, Field{Name: "receiver", Offset: 8, Type: recv})
	}
	sort.SliceStable(t.Fields, func(i, j int) bool { return t.Fields[i].Offset < t.Fields[j].Offset })
	// The captured variables' types are complete (their sizes known) once
	// finished: a type built here first would otherwise count as 0 bytes.
	x.finish()
	for _, f := range t.Fields {
		if f.Type != nil && f.Offset+f.Type.Size > t.Size {
			t.Size = f.Offset + f.Type.Size
		}
	}
	t.Size = (t.Size + 7) &^ 7
	x.closures[entry] = t
	return t
}

// methodValueReceiver returns the name of the receiver type of the method
// value wrapper fn ("main.(*server).handle-fm": "*main.server";
// "main.server.handle-fm": "main.server"), "" for another function.
func methodValueReceiver(fn string) string {
	m, ok := strings.CutSuffix(fn, "-fm")
	if !ok || strings.ContainsAny(m, "[]") {
		return "" // not a method value, or a generic one (shapes)
	}
	if i := strings.Index(m, ".(*"); i >= 0 {
		j := strings.Index(m[i:], ").")
		if j < 0 {
			return ""
		}
		return "*" + m[:i] + "." + m[i+3:i+j]
	}
	// pkg/path.T.m: the type is between the last two dots after the
	// last slash.
	slash := strings.LastIndexByte(m, '/') + 1
	dot := strings.LastIndexByte(m, '.')
	if dot <= slash {
		return ""
	}
	recv := m[:dot]
	if strings.LastIndexByte(recv, '.') < slash {
		return "" // a function, not a method
	}
	return recv
}

// closureVars returns the captured variables of the subprogram at off.
// Called with x.mu held.
func (x *typeIndex) closureVars(off dwarf.Offset) []Field {
	_, kids, err := x.read(off)
	if err != nil {
		return nil
	}
	var fields []Field
	for _, c := range kids {
		if c.Tag != dwarf.TagVariable && c.Tag != dwarf.TagFormalParameter {
			continue
		}
		src := c
		if origin, ok := c.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
			if o, _, err := x.read(origin); err == nil {
				src = o
			}
		}
		coff, ok := src.Val(attrGoClosureOffset).(int64)
		if !ok {
			continue
		}
		name, _ := src.Val(dwarf.AttrName).(string)
		var ft *Type
		if typ, ok := src.Val(dwarf.AttrType).(dwarf.Offset); ok {
			ft = x.build(typ)
		}
		fields = append(fields, Field{Name: name, Offset: coff, Type: ft})
	}
	return fields
}
