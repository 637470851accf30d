package binsym

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// A Type is a Go type as the executable's DWARF describes it or, when the
// executable has no DWARF, as its runtime type descriptors do (see
// TypeAt for what differs).
//
// Types form a graph (a struct may point to itself) and are shared: do not
// modify them.
type Type struct {
	// Name is the type's name as the linker writes it in DWARF:
	// "context.valueCtx", "*context.cancelCtx", "[]uint8",
	// "map[string]context.Context". Types are qualified by their package
	// path, with dots in its last element escaped as %2e
	// ("gopkg.in/yaml%2ev3.Node"), and so are the unexported fields and
	// methods of struct and interface literals ("struct { main.ctx
	// context.Context }"). A type defined inside a function is named as
	// the runtime names it, "main.local", without DWARF's "·1": the name
	// is the same with or without DWARF (dropLocalSuffix).
	Name string
	// Kind is the type's kind. reflect.Kind has the values of the runtime's
	// abi.Kind, which DWARF records.
	Kind reflect.Kind
	// Size is the size of a value of the type in bytes.
	Size int64
	// Elem is the element type of a pointer, slice, array or channel, and
	// the value type of a map.
	Elem *Type
	// Key is the key type of a map.
	Key *Type
	// Len is the length of an array.
	Len int64
	// Fields are the fields of a struct, by offset. For the type ClosureType
	// returns, they are the closure's code pointer F and captured
	// variables.
	Fields []Field
	// Header is, for a map or a channel, the type of the runtime object a
	// value of the type points to (the map<K,V> or hchan<T> struct the
	// linker describes), or nil if DWARF does not say. From runtime type
	// descriptors it has the same name and the fields of the runtime's
	// own type (internal/runtime/maps.Map, runtime.hchan), whose pointers
	// are untyped (unsafe.Pointer) where DWARF's are typed (the map's
	// directory of tables).
	Header *Type

	emptyIface bool   // an interface with no methods (runtime.eface layout)
	equal      bool   // the runtime type descriptor has an equality function
	noalg      bool   // Name has the linker's "noalg." prefix
	rt         uint64 // link address of the runtime type descriptor, or 0
	under      *Type  // for a named type, the DWARF type it is defined as
	finished   bool   // the fields copied from under are set
}

// A Field is a field of a struct type.
type Field struct {
	Name     string
	Offset   int64
	Type     *Type
	Embedded bool
}

// String returns t's name.
func (t *Type) String() string {
	if t == nil {
		return "<nil>"
	}
	return t.Name
}

// EmptyInterface reports whether t is an interface type with no methods,
// whose first word is a type descriptor; a non-empty interface's first word
// is an itab (see ItabType).
func (t *Type) EmptyInterface() bool { return t != nil && t.Kind == reflect.Interface && t.emptyIface }

// DirectIface reports whether a value of type t is stored directly in an
// interface's data word rather than pointed to by it: a pointer-shaped type
// (a pointer, map, channel, func, unsafe.Pointer, or a one-word struct or
// array whose word is one of these). When the dynamic type of an interface
// is direct, the object its data word points to has the type that t's word
// points to (t.Elem for a pointer); otherwise the object is a value of
// type t.
func (t *Type) DirectIface() bool {
	if t == nil || t.Size != 8 {
		return false
	}
	_, ft, _ := t.PointerAt(0)
	return ft != nil && ft.Size == 8
}

// PointerAt describes the pointer word at byte offset off of a value of
// type t. It descends through structs and arrays and returns the path to
// the word (".Context", ".Pair[1]", "[3].next"), the type ft of the
// smallest value that holds it, and whether the word is an interface's
// data word.
//
// ft is a pointer, map, channel, func or unsafe.Pointer type whose value is
// the word; a string or slice type (the word is its data pointer, at
// offset 0 of it: a slice's backing array is an [N]Elem object, see
// ArrayOf); or an interface type. For an interface, the word at offset 0
// of it is the type descriptor (empty interface) or itab and the word at
// offset 8, for which ifaceData is true, points to the value, whose type
// that first word gives. ft is nil if off is not a pointer word of t.
func (t *Type) PointerAt(off int64) (path string, ft *Type, ifaceData bool) {
	var sb strings.Builder
	ft, ifaceData = t.pointerAt(off, &sb)
	if ft == nil {
		return "", nil, false
	}
	return sb.String(), ft, ifaceData
}

func (t *Type) pointerAt(off int64, path *strings.Builder) (*Type, bool) {
	for depth := 0; depth < 100; depth++ {
		if t == nil || off < 0 || off >= t.Size || off%8 != 0 {
			return nil, false
		}
		switch t.Kind {
		case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.String, reflect.Slice:
			if off != 0 {
				return nil, false
			}
			return t, false
		case reflect.Interface:
			return t, off == 8
		case reflect.Array:
			if t.Elem == nil || t.Elem.Size <= 0 {
				return nil, false
			}
			i := off / t.Elem.Size
			path.WriteString("[" + strconv.FormatInt(i, 10) + "]")
			t, off = t.Elem, off-i*t.Elem.Size
			continue
		}
		if t.Kind != reflect.Struct {
			return nil, false
		}
		// The last field that starts at or before off and is not empty.
		i := sort.Search(len(t.Fields), func(i int) bool { return t.Fields[i].Offset > off }) - 1
		for ; i >= 0; i-- {
			f := t.Fields[i]
			if f.Type != nil && f.Type.Size > 0 {
				if off-f.Offset >= f.Type.Size {
					return nil, false
				}
				path.WriteString("." + f.Name)
				t, off = f.Type, off-f.Offset
				break
			}
		}
		if i < 0 {
			return nil, false
		}
	}
	return nil, false
}

// Pointee returns the type of the object that a pointer word of type t
// (as PointerAt returns it) points to: the element of a pointer; the
// runtime's map or channel object (Header); the element type of a slice's
// or string's backing array, which is an array of it (see ArrayOf). It
// returns nil for a func, whose object ClosureType describes from its code
// pointer, for unsafe.Pointer, and for an interface, whose data word points
// to an object of the type its first word gives (see IfacePointee).
func (t *Type) Pointee() *Type {
	if t == nil {
		return nil
	}
	switch t.Kind {
	case reflect.Pointer, reflect.Slice:
		return t.Elem
	case reflect.Map, reflect.Chan:
		return t.Header
	case reflect.String:
		if len(t.Fields) > 0 && t.Fields[0].Type != nil {
			return t.Fields[0].Type.Elem
		}
	}
	return nil
}

// IfacePointee returns the type of the object an interface's data word
// points to when t is the interface's dynamic type: t itself, unless t is
// pointer-shaped (DirectIface), when the data word is t's value and the
// object is what it points to. It returns nil when that is a closure or
// unknown (see Pointee).
func (t *Type) IfacePointee() *Type {
	if !t.DirectIface() {
		return t
	}
	_, ft, _ := t.PointerAt(0)
	return ft.Pointee()
}

// ArrayOf returns the type [n]elem: the type of a slice's backing array, or
// of a heap object that holds n values of type elem. It returns nil for a
// nil elem.
func ArrayOf(elem *Type, n int64) *Type {
	if elem == nil {
		return nil
	}
	return &Type{
		Name: "[" + strconv.FormatInt(n, 10) + "]" + elem.Name,
		Kind: reflect.Array,
		Size: n * elem.Size,
		Elem: elem,
		Len:  n,
	}
}
