package binsym

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
)

// A pendingType is a type being built and its descriptor.
type pendingType struct {
	t     *Type
	r     *rawType
	state int8 // of naming: 0 unnamed, 1 in progress, 2 named
}

// build returns the types at the link addresses roots, decoding them and
// every type they lead to that was not decoded yet: their elements, keys,
// fields and parameters. Called with x.mu held.
func (x *descIndex) build(roots []uint64) []*Type {
	var pending []*pendingType
	byType := map[*Type]*pendingType{}
	// get returns the type at a, queueing it for decoding if it is new;
	// an invalid descriptor is a type named "?".
	get := func(a uint64) *Type {
		if t := x.built[a]; t != nil {
			return t
		}
		r, err := x.raw(a)
		if err == nil && x.parts+len(r.fields)+len(r.in)+len(r.out)+len(r.imethods) > x.maxParts {
			err = fmt.Errorf("corrupt type descriptors: more fields and parameters than the types section holds, at %#x", a)
		}
		if err != nil {
			x.noteErr(err)
			return &Type{Name: "?"}
		}
		x.parts += len(r.fields) + len(r.in) + len(r.out) + len(r.imethods)
		t := &Type{Kind: r.kind, Size: int64(r.size), rt: a, equal: r.equal}
		x.built[a] = t
		p := &pendingType{t: t, r: r}
		pending = append(pending, p)
		byType[t] = p
		return t
	}
	out := make([]*Type, len(roots))
	for i, a := range roots {
		if t, ok := x.built[a]; ok {
			out[i] = t
			continue
		}
		// An address that is not a descriptor is no error of the file.
		if _, err := x.raw(a); err != nil {
			x.built[a] = nil
			continue
		}
		out[i] = get(a)
	}
	// Decode breadth first: pending grows as new types are met.
	var maps, chans []*pendingType
	for i := 0; i < len(pending); i++ {
		p := pending[i]
		linkParts(p, get)
		switch p.t.Kind {
		case reflect.Map:
			maps = append(maps, p)
		case reflect.Chan:
			chans = append(chans, p)
		}
	}
	for _, p := range pending {
		x.name(p, byType, 0)
	}
	for _, p := range pending {
		x.finishDesc(p.t)
		if _, dup := x.names[p.t.Name]; x.names != nil && !dup {
			x.names[p.t.Name] = p.t
		}
	}
	// Headers come last: their runtime types may be new in this batch,
	// and the runtime's own types are built by a nested build.
	for _, p := range maps {
		p.t.Header = x.header(p.t)
	}
	for _, p := range chans {
		p.t.Header = x.header(p.t)
	}
	return out
}

// linkParts sets the elements, key and fields of the pending type p to
// the types get returns for their descriptors, and gets its parameter and
// method types too.
func linkParts(p *pendingType, get func(uint64) *Type) {
	t, r := p.t, p.r
	switch t.Kind {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		t.Elem = get(r.elem)
		t.Len = int64(r.arrayLen)
	case reflect.Map:
		t.Key, t.Elem = get(r.key), get(r.elem)
	case reflect.Interface:
		t.emptyIface = len(r.imethods) == 0
	case reflect.Struct:
		t.Fields = make([]Field, len(r.fields))
		for j, f := range r.fields {
			t.Fields[j] = Field{Name: f.name, Offset: int64(f.offset), Type: get(f.typ), Embedded: f.embedded}
		}
		slices.SortStableFunc(t.Fields, func(a, b Field) int { return cmp.Compare(a.Offset, b.Offset) })
	}
	// Parameter and method types are needed only for names.
	for _, a := range r.in {
		get(a)
	}
	for _, a := range r.out {
		get(a)
	}
	for _, m := range r.imethods {
		get(m.typ)
	}
}

// finishDesc gives strings and slices the fields DWARF describes them
// with: {str *uint8; len int} and {array *T; len int; cap int}. Called
// with x.mu held.
func (x *descIndex) finishDesc(t *Type) {
	switch t.Kind {
	case reflect.String:
		t.Fields = []Field{
			{Name: "str", Offset: 0, Type: x.pointerTo(x.basicType(reflect.Uint8))},
			{Name: "len", Offset: 8, Type: x.basicType(reflect.Int)},
		}
	case reflect.Slice:
		t.Fields = []Field{
			{Name: "array", Offset: 0, Type: x.pointerTo(t.Elem)},
			{Name: "len", Offset: 8, Type: x.basicType(reflect.Int)},
			{Name: "cap", Offset: 16, Type: x.basicType(reflect.Int)},
		}
	}
}

// basicType returns a made-up type of kind k (int or uint8), with no
// descriptor. Called with x.mu held.
func (x *descIndex) basicType(k reflect.Kind) *Type {
	if t := x.basic[k]; t != nil {
		return t
	}
	t := &Type{Name: k.String(), Kind: k, Size: int64(fixedSize[k])}
	x.basic[k] = t
	return t
}

// pointerTo returns a made-up pointer type to elem. Called with x.mu held.
func (x *descIndex) pointerTo(elem *Type) *Type {
	if t := x.ptrTo[elem]; t != nil {
		return t
	}
	name := "*?"
	if x.spend(1 + len(elem.Name)) {
		name = "*" + elem.Name
	}
	t := &Type{Name: name, Kind: reflect.Pointer, Size: 8, Elem: elem}
	x.ptrTo[elem] = t
	return t
}

// header returns the made-up type of the runtime object that a map or
// channel value points to, named as DWARF names it ("map<K,V>",
// "hash<K,V>" before Go 1.24, "hchan<T>"), with the fields of the
// runtime's own type (internal/runtime/maps.Map, runtime.hmap,
// runtime.hchan) if the walk found its descriptor, or nil. Called with
// x.mu held.
func (x *descIndex) header(t *Type) *Type {
	if t.Elem == nil || t.Kind == reflect.Map && t.Key == nil {
		return nil
	}
	var name, runtimeType string
	switch {
	case t.Kind == reflect.Chan:
		name, runtimeType = "hchan<"+t.Elem.Name+">", "runtime.hchan"
	case x.swiss:
		name, runtimeType = "map<"+t.Key.Name+","+t.Elem.Name+">", "internal/runtime/maps.Map"
	default:
		name, runtimeType = "hash<"+t.Key.Name+","+t.Elem.Name+">", "runtime.hmap"
	}
	if _, ok := x.headers[name]; !ok && !x.spend(len(name)) {
		return nil
	}
	if h, ok := x.headers[name]; ok {
		return h
	}
	x.walk()
	var h *Type
	if a, ok := x.byName[runtimeType]; ok {
		if rt := x.build([]uint64{a})[0]; rt != nil && rt.Kind == reflect.Struct {
			h = &Type{Name: name, Kind: reflect.Struct, Size: rt.Size, Fields: rt.Fields}
		}
	}
	x.headers[name] = h
	return h
}
