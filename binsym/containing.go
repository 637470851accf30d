package binsym

import (
	"debug/dwarf"
	"reflect"
	"sort"
	"strings"
)

// smallSizes are the runtime's size classes up to 32 KiB
// (runtime/sizeclasses.go, the same from Go 1.22 to 1.27): a heap object's
// size is the class its value was rounded up to.
var smallSizes = []int64{0, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792,
	2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240,
	10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// maxCandidates bounds the struct types of one size ContainingType builds.
const maxCandidates = 4096

// ContainingType returns the struct type of a heap object of objSize
// bytes (a size class, or whole pages past 32 KiB) that holds a value of
// type field at offset off, at any depth of its fields, and has a pointer
// word at each of ptrOffsets that lie within it (the object's pointer
// fields, from the dump). It returns nil when DWARF has no such type, or
// more than one: a pointer into the middle of an object is typed only
// when its container can be told. off may be 0: the object's first field
// (an untyped object is then typed from a field that points on).
//
// It never returns a type of the runtime's own packages (see runtimeOwn):
// those containers only DWARF can tell, so a stripped executable, whose
// types come from the runtime type descriptors, would name the same object
// otherwise. A pointer into one keeps the type of the value it points to,
// which every build names alike: the timer a P's timer heap points to is a
// runtime.timer, not the runtime.timeTimer (Go 1.23 and later) around it.
func (b *Binary) ContainingType(field *Type, off int64, objSize uint64, ptrOffsets []uint64) *Type {
	x := b.dwarfTypes()
	if x == nil || field == nil || field.Name == "" || off < 0 {
		return nil
	}
	hi := int64(objSize)
	lo := hi - 8192 // whole pages
	if hi <= 32768 {
		i := sort.Search(len(smallSizes), func(i int) bool { return smallSizes[i] >= hi })
		if i == len(smallSizes) || smallSizes[i] != hi || i == 0 {
			return nil
		}
		lo = smallSizes[i-1]
	}
	if off+field.Size > hi {
		return nil
	}
	x.mu.Lock()
	bySize := x.structsBySize()
	var offs []dwarf.Offset
	for size := lo + 1; size <= hi; size++ {
		offs = append(offs, bySize[size]...)
		if len(offs) > maxCandidates {
			x.mu.Unlock()
			return nil
		}
	}
	x.mu.Unlock()
	var found *Type
	for _, o := range offs {
		t := x.get(o)
		if t == nil || runtimeOwn(t.Name) || !holdsAt(t, field.Name, off) || !pointersAt(t, ptrOffsets) {
			continue
		}
		if found != nil && found.Name != t.Name {
			return nil // ambiguous
		}
		found = t
	}
	return found
}

// runtimeOwn reports whether the type named name belongs to the runtime's
// own packages: runtime and the standard library's internal/ packages
// (internal/runtime/maps, internal/sync). Their layout is private and
// changes between Go releases, and the structs that only wrap another of
// theirs (runtime.timeTimer around runtime.timer) have no runtime type
// descriptor that a stripped executable's types can be found from: a
// report names these objects by the runtime type a pointer points to.
func runtimeOwn(name string) bool {
	return strings.HasPrefix(name, "runtime.") || strings.HasPrefix(name, "internal/")
}

// structsBySize indexes the named struct types by size, once. Called with
// x.mu held.
func (x *typeIndex) structsBySize() map[int64][]dwarf.Offset {
	if x.bySize != nil {
		return x.bySize
	}
	x.bySize = map[int64][]dwarf.Offset{}
	defer func() {
		if r := recover(); r != nil { // debug/dwarf on corrupt input
			x.bySize = map[int64][]dwarf.Offset{}
		}
	}()
	r := x.d.Reader()
	offs := make([]dwarf.Offset, 0, len(x.byName))
	for _, o := range x.byName {
		offs = append(offs, o)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	for _, o := range offs {
		r.Seek(o)
		e, err := r.Next()
		if err != nil || e == nil || e.Tag != dwarf.TagStructType {
			continue
		}
		if size, ok := e.Val(dwarf.AttrByteSize).(int64); ok && size > 0 {
			x.bySize[size] = append(x.bySize[size], o)
		}
	}
	return x.bySize
}

// holdsAt reports whether struct t has, at some depth, a field of the type
// named name at offset off.
func holdsAt(t *Type, name string, off int64) bool {
	for depth := 0; depth < 100 && t != nil; depth++ {
		if t.Kind == reflect.Struct {
			var next *Type
			for _, f := range t.Fields {
				if f.Type == nil || f.Offset > off || off-f.Offset >= max(f.Type.Size, 1) {
					continue
				}
				if f.Offset == off && f.Type.Name == name {
					return true
				}
				if f.Type.Size > 0 {
					next, off = f.Type, off-f.Offset
					break
				}
			}
			t = next
			continue
		}
		if t.Kind == reflect.Array && t.Elem != nil && t.Elem.Size > 0 {
			off %= t.Elem.Size
			if off == 0 && t.Elem.Name == name {
				return true
			}
			t = t.Elem
			continue
		}
		return false
	}
	return false
}

// pointersAt reports whether t has a pointer word at each of offs that lies
// within it.
func pointersAt(t *Type, offs []uint64) bool {
	for _, o := range offs {
		if int64(o) >= t.Size {
			break
		}
		if _, ft, _ := t.PointerAt(int64(o)); ft == nil {
			return false
		}
	}
	return true
}
