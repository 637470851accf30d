package binsym

import (
	"encoding/binary"
	"maps"
	"slices"
	"strings"
)

// walk finds the descriptors reachable from the module's typelinks (the
// unnamed composite types) and itabs, following elements, fields,
// parameters and methods, and indexes the named ones by name. It decodes
// descriptors but builds no types. Called with x.mu held.
func (x *descIndex) walk() {
	if x.walked {
		return
	}
	x.walked = true
	x.byName = map[string]uint64{}
	x.headers = map[string]*Type{}
	var queue []uint64
	seen := map[uint64]bool{}
	push := func(a uint64) {
		if a != 0 && !seen[a] && x.inSection(a) {
			seen[a] = true
			queue = append(queue, a)
		}
	}
	b := x.b
	if types, end, _, _, ok := b.typesRegions(); ok {
		descs, _ := x.typelinks127(types, end)
		for _, a := range descs {
			push(a)
		}
	}
	typelinks, _ := b.moduleTables()
	if data, ok := b.readLink(typelinks.addr, int(4*min(typelinks.n, uint64(len(x.data))))); ok {
		for i := 0; i+4 <= len(data); i += 4 {
			if o := int32(binary.LittleEndian.Uint32(data[i:])); o >= 0 {
				push(x.start + uint64(o))
			}
		}
	}
	r := &descReader{x: x}
	word := func(a uint64) uint64 { // an itab's word, in the section or not
		if x.inSection(a) {
			r.err = nil
			return r.ptr(a)
		}
		return b.linkWord(a)
	}
	for itab := range b.itabLinks() {
		push(word(itab))     // Inter
		push(word(itab + 8)) // Type
	}
	t := &rawType{}
	for i := 0; i < len(queue); i++ {
		a := queue[i]
		_, err := x.decode(a, false, t)
		if err != nil {
			continue
		}
		x.all = append(x.all, a)
		if t.pkgPath != "" {
			if _, rest, ok := strings.Cut(t.str, "."); ok {
				name := pathToPrefix(t.pkgPath) + "." + rest
				if old, dup := x.byName[name]; !dup || a < old {
					x.byName[name] = a
				}
			}
		}
		push(t.elem)
		push(t.key)
		for _, f := range t.fields {
			push(f.typ)
		}
		for _, p := range t.in {
			push(p)
		}
		for _, p := range t.out {
			push(p)
		}
		for _, m := range t.imethods {
			push(m.typ)
		}
		if t.uncommon != 0 {
			for _, m := range x.methodTypes(t.uncommon) {
				push(m)
			}
		}
	}
	slices.Sort(x.all)
}

// typeByName returns the type named name among those the walk finds and
// those already built, or nil. The first call builds them all.
func (x *descIndex) typeByName(name string) *Type {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.walk()
	if a, ok := x.byName[name]; ok {
		return x.build([]uint64{a})[0]
	}
	if x.names == nil {
		// Index every type built so far, and then every one built.
		x.build(x.all)
		addrs := slices.Sorted(maps.Keys(x.built))
		x.names = map[string]*Type{}
		for _, a := range addrs {
			if t := x.built[a]; t != nil && t.Name != "" {
				if _, dup := x.names[t.Name]; !dup {
					x.names[t.Name] = t
				}
			}
		}
	}
	return x.names[name]
}
