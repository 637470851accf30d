package binsym

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Go's DWARF extensions (cmd/internal/dwarf).
const (
	attrGoKind          dwarf.Attr = 0x2900
	attrGoKey           dwarf.Attr = 0x2901
	attrGoElem          dwarf.Attr = 0x2902
	attrGoEmbeddedField dwarf.Attr = 0x2903
	attrGoRuntimeType   dwarf.Attr = 0x2904
	attrGoClosureOffset dwarf.Attr = 0x2907
)

// get builds the type at off and finishes it. It takes x.mu.
func (x *typeIndex) get(off dwarf.Offset) (t *Type) {
	x.mu.Lock()
	defer x.mu.Unlock()
	defer x.recoverCorrupt(&t)
	t = x.build(off)
	x.finish()
	return t
}

// recoverCorrupt turns a panic in debug/dwarf on corrupt input into a nil
// type and a recorded error. Called with x.mu held.
func (x *typeIndex) recoverCorrupt(t **Type) {
	if r := recover(); r != nil {
		*t = nil
		x.pending = x.pending[:0]
		x.todo = x.todo[:0]
		if x.err == nil {
			x.err = fmt.Errorf("corrupt DWARF: %v", r)
		}
	}
}

func (x *typeIndex) buildNamed(name string) *Type {
	if off, ok := x.byName[name]; ok {
		return x.build(off)
	}
	return &Type{Name: name, Kind: reflect.Uintptr, Size: 8}
}

// maxReadEntries is the most entries one read decodes below its entry, and
// maxKids the most children it keeps: a type of more members or elements,
// or a function of more parameters, variables and scopes, is corrupt. A
// struct of 64M one-byte members took 2.3 GB and more than 20 s to read.
const (
	maxReadEntries = 1 << 20
	maxKids        = 1 << 16
)

// read returns the entry at off and its direct children. Every entry it
// decodes, children of children included, is charged to x.budget: in valid
// DWARF the entries read for different types do not overlap, while corrupt
// nesting could make each read cover the rest of the section.
func (x *typeIndex) read(off dwarf.Offset) (*dwarf.Entry, []*dwarf.Entry, error) {
	x.r.Seek(off)
	e, err := x.next()
	if err != nil {
		return nil, nil, err
	}
	if e == nil {
		return nil, nil, errors.New("no entry")
	}
	var kids []*dwarf.Entry
	for depth, n := 0, 0; e.Children; n++ {
		if n >= maxReadEntries {
			return nil, nil, fmt.Errorf("corrupt DWARF: the entry at %#x has more than %d entries below it", off, maxReadEntries)
		}
		c, err := x.next()
		if err != nil {
			return nil, nil, err
		}
		if c == nil {
			break
		}
		if c.Tag == 0 {
			if depth == 0 {
				break
			}
			depth--
			continue
		}
		if depth == 0 {
			if len(kids) == maxKids {
				return nil, nil, fmt.Errorf("corrupt DWARF: the entry at %#x has more than %d children", off, maxKids)
			}
			kids = append(kids, c)
		}
		if c.Children {
			depth++
		}
	}
	return e, kids, nil
}

// next decodes the next entry, if the budget allows.
func (x *typeIndex) next() (*dwarf.Entry, error) {
	if x.budget <= 0 {
		return nil, errReadBudget
	}
	x.budget--
	return x.r.Next()
}

// errReadBudget is the error of reading more DWARF entries than valid DWARF
// of the size of .debug_info can make a reader decode.
var errReadBudget = errors.New("corrupt DWARF: its nesting makes reading the types decode the same entries over and over")

// build returns the type described at off, creating it and the types it
// refers to. Named types defined as another DWARF type are completed by
// finish. Types are filled from a work list, not by recursion, so that a
// corrupt DWARF type that contains itself, or a long chain of types, does
// not exhaust the stack. Called with x.mu held.
func (x *typeIndex) build(off dwarf.Offset) *Type {
	if t, ok := x.built[off]; ok {
		return t // built and filled: the work list is empty between builds
	}
	t := x.shell(off)
	for len(x.todo) > 0 {
		w := x.todo[len(x.todo)-1]
		x.todo = x.todo[:len(x.todo)-1]
		x.fill(w)
	}
	return t
}

// A typeWork is a type created by shell and the DWARF entry to fill it from.
type typeWork struct {
	t    *Type
	e    *dwarf.Entry
	kids []*dwarf.Entry
}

// maxAliasChain bounds a chain of typedefs that name the same type: a
// longer one is corrupt.
const maxAliasChain = 64

// shell returns the type at off if it was built, or else creates it, with
// its name and kind, and queues it to be filled. A compiler's typedef for a
// named type refers to the linker's description of it, the same type: the
// chain is followed to that description. Called with x.mu held.
func (x *typeIndex) shell(off dwarf.Offset) *Type {
	if t, ok := x.built[off]; ok {
		return t
	}
	var aliases []dwarf.Offset
	for {
		e, kids, err := x.read(off)
		if err == nil && len(aliases) >= maxAliasChain {
			err = fmt.Errorf("DWARF entry at %#x: typedef chain of more than %d entries", off, maxAliasChain)
		}
		if err != nil {
			if x.err == nil {
				x.err = err
			}
			return x.alias(aliases, off, &Type{Name: "?"})
		}
		_, hasKind := e.Val(attrGoKind).(int64)
		target, hasTarget := e.Val(dwarf.AttrType).(dwarf.Offset)
		if e.Tag == dwarf.TagTypedef && !hasKind && hasTarget {
			aliases = append(aliases, off)
			if t, ok := x.built[target]; ok {
				return x.alias(aliases, target, t)
			}
			if slices.Contains(aliases, target) {
				if x.err == nil {
					x.err = fmt.Errorf("DWARF entry at %#x: typedef of itself", off)
				}
				return x.alias(aliases, target, &Type{Name: "?"})
			}
			off = target
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		kind, _ := e.Val(attrGoKind).(int64)
		t := &Type{Name: dropLocalSuffix(name), Kind: reflect.Kind(kind & 0x1f)}
		x.alias(aliases, off, t)
		x.todo = append(x.todo, typeWork{t: t, e: e, kids: kids})
		return t
	}
}

// alias records t as the type at off and at each offset of aliases.
func (x *typeIndex) alias(aliases []dwarf.Offset, off dwarf.Offset, t *Type) *Type {
	x.built[off] = t
	for _, a := range aliases {
		x.built[a] = t
	}
	return t
}

// fill sets what the entry of w says of its type, creating the types it
// refers to with shell. Called with x.mu held.
func (x *typeIndex) fill(w typeWork) {
	t, e, kids := w.t, w.e, w.kids
	target, hasTarget := e.Val(dwarf.AttrType).(dwarf.Offset)
	if rt, ok := e.Val(attrGoRuntimeType).(uint64); ok {
		t.rt = x.types + rt
	}
	if size, ok := e.Val(dwarf.AttrByteSize).(int64); ok {
		t.Size = size
	}
	if k, ok := e.Val(attrGoKey).(dwarf.Offset); ok {
		t.Key = x.shell(k)
	}
	if el, ok := e.Val(attrGoElem).(dwarf.Offset); ok {
		t.Elem = x.shell(el)
	}
	switch e.Tag {
	case dwarf.TagPointerType:
		if t.Kind == reflect.Invalid {
			t.Kind = reflect.Pointer
		}
		if !hasTarget {
			t.Kind = reflect.UnsafePointer
		} else {
			t.Elem = x.shell(target)
		}
		t.Size = 8
	case dwarf.TagStructType:
		if t.Kind == reflect.Invalid {
			t.Kind = reflect.Struct
		}
		for _, c := range kids {
			if c.Tag != dwarf.TagMember {
				continue
			}
			f := Field{}
			f.Name, _ = c.Val(dwarf.AttrName).(string)
			f.Offset, _ = c.Val(dwarf.AttrDataMemberLoc).(int64)
			f.Embedded, _ = c.Val(attrGoEmbeddedField).(bool)
			if ft, ok := c.Val(dwarf.AttrType).(dwarf.Offset); ok {
				f.Type = x.shell(ft)
			}
			t.Fields = append(t.Fields, f)
		}
		sort.SliceStable(t.Fields, func(i, j int) bool { return t.Fields[i].Offset < t.Fields[j].Offset })
	case dwarf.TagArrayType:
		t.Kind = reflect.Array
		if hasTarget {
			t.Elem = x.shell(target)
		}
		for _, c := range kids {
			if c.Tag == dwarf.TagSubrangeType {
				t.Len, _ = c.Val(dwarf.AttrCount).(int64)
			}
		}
	case dwarf.TagSubroutineType:
		t.Kind = reflect.Func
		t.Size = 8
	case dwarf.TagTypedef:
		if hasTarget {
			t.under = x.shell(target)
			x.pending = append(x.pending, t)
		}
	}
}

// finish completes the named types built since the last call from the
// types they are defined as, which are complete now. Called with x.mu held.
func (x *typeIndex) finish() {
	for _, t := range x.pending {
		finishNamed(t)
	}
	x.pending = x.pending[:0]
}

// finishNamed completes t and the chain of named types it is defined as,
// innermost first. A corrupt chain that loops ends where it loops.
func finishNamed(t *Type) {
	var chain []*Type
	for u := t; u != nil && !u.finished; u = u.under {
		u.finished = true
		chain = append(chain, u)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].under != nil {
			finishOne(chain[i])
		}
	}
}

// finishOne copies to the named type t what its definition, t.under,
// which is finished, says.
func finishOne(t *Type) {
	u := t.under
	if t.Size == 0 {
		t.Size = u.Size
	}
	switch t.Kind {
	case reflect.Interface:
		t.Size = 16
		t.emptyIface = u.Name == "runtime.eface" || u.Kind == reflect.Interface && u.emptyIface
	case reflect.Map, reflect.Chan:
		// Defined as a pointer to the runtime's object, or as another
		// map or channel type.
		t.Size = 8
		if u.Kind == reflect.Pointer {
			t.Header = u.Elem
			break
		}
		t.Header = u.Header
		if t.Key == nil {
			t.Key = u.Key
		}
		if t.Elem == nil {
			t.Elem = u.Elem
		}
	case reflect.Func:
		t.Size = 8
	default:
		if t.Kind == reflect.Invalid {
			t.Kind = u.Kind
		}
		if t.Elem == nil {
			t.Elem = u.Elem
		}
		if t.Key == nil {
			t.Key = u.Key
		}
		t.Len, t.Fields, t.Header, t.emptyIface = u.Len, u.Fields, u.Header, u.emptyIface
	}
}

// dropLocalSuffix returns the DWARF type name name without the suffix the
// linker gives a type defined inside a function ("main.local·1", also
// within a composite name: "*main.local·1"), which the runtime does not
// record: a type has the name the runtime type descriptors give it, with
// or without DWARF. Two such types of the same name in different functions
// then share it, as they do in the descriptors and in reflect's %T.
func dropLocalSuffix(name string) string {
	i := strings.Index(name, "·")
	if i < 0 {
		return name
	}
	var b strings.Builder
	for i >= 0 {
		b.WriteString(name[:i])
		name = name[i+len("·"):]
		j := strings.IndexFunc(name, func(r rune) bool { return r < '0' || r > '9' })
		if j < 0 {
			j = len(name)
		}
		if j == 0 {
			b.WriteString("·") // not a local type's suffix
		}
		name = name[j:]
		i = strings.Index(name, "·")
	}
	b.WriteString(name)
	return b.String()
}
