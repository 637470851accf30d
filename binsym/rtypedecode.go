package binsym

import (
	"fmt"
	"reflect"
)

// A rawType is what one descriptor says, with the descriptors it refers to
// as link addresses.
type rawType struct {
	kind      reflect.Kind
	size      uint64
	str       string // the runtime's name of the type
	named     bool   // a defined or predeclared type
	equal     bool   // the type has an equality function
	pkgPath   string // a defined type's package path
	elem, key uint64
	arrayLen  uint64
	chanDir   uint64
	fields    []rawField
	in, out   []uint64 // parameter and result types of a func
	variadic  bool
	imethods  []rawMethod
	uncommon  uint64 // link address of the uncommon data, or 0
}

type rawField struct {
	name     string
	pkgPath  string // of an unexported name
	tag      string
	typ      uint64
	offset   uint64
	embedded bool
}

type rawMethod struct {
	name, pkgPath string
	typ           uint64
}

// A descReader reads the types section, keeping the first error.
type descReader struct {
	x   *descIndex
	err error
}

func (r *descReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// bytes returns the n bytes at the link address a, which must be in the
// section.
func (r *descReader) bytes(a, n uint64) (string, bool) {
	x := r.x
	if a < x.start || a-x.start > uint64(len(x.data)) || n > uint64(len(x.data))-(a-x.start) {
		r.fail("%d bytes at %#x are outside the types section [%#x, %#x)", n, a, x.start, x.start+uint64(len(x.data)))
		return "", false
	}
	return x.data[a-x.start : a-x.start+n], true
}

// The little-endian integers at a.

func (r *descReader) u8(a uint64) uint8 {
	p, ok := r.bytes(a, 1)
	if !ok {
		return 0
	}
	return p[0]
}

func (r *descReader) u16(a uint64) uint16 {
	p, ok := r.bytes(a, 2)
	if !ok {
		return 0
	}
	return uint16(p[0]) | uint16(p[1])<<8
}

func (r *descReader) u32(a uint64) uint32 {
	p, ok := r.bytes(a, 4)
	if !ok {
		return 0
	}
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
}

func (r *descReader) u64(a uint64) uint64 {
	p, ok := r.bytes(a, 8)
	if !ok {
		return 0
	}
	return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
		uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56
}

// ptr reads the pointer word at a: in a PIE, the addend of the relocation
// that fills it.
func (r *descReader) ptr(a uint64) uint64 {
	v := r.u64(a)
	if v == 0 && r.x.b.pie && r.err == nil {
		v = r.x.b.relative(a)
	}
	return v
}

// typePtr reads a pointer to a descriptor, which must be in the section.
func (r *descReader) typePtr(a uint64) uint64 {
	v := r.ptr(a)
	if !r.x.inSection(v) {
		r.fail("type pointer %#x at %#x is outside the types section", v, a)
		return 0
	}
	return v
}

// off resolves an offset from the section start (a NameOff or TypeOff).
func (r *descReader) off(a uint64) uint64 {
	o := int32(r.u32(a))
	if o < 0 || uint64(o) >= uint64(len(r.x.data)) {
		r.fail("offset %d at %#x is outside the types section", o, a)
		return 0
	}
	return r.x.start + uint64(o)
}

func (x *descIndex) inSection(a uint64) bool {
	return a >= x.start && a-x.start < uint64(len(x.data))
}

// name reads an abi.Name at a: flags, a varint length and the bytes, then
// an optional tag and package path.
func (r *descReader) name(a uint64) (name, tag, pkgPath string, embedded bool) {
	return r.nameAt(a, 0)
}

func (r *descReader) nameAt(a uint64, depth int) (name, tag, pkgPath string, embedded bool) {
	flags := r.u8(a)
	p := a + 1
	str := func() string {
		n, k := uint64(0), uint(0)
		for i := 0; ; i++ {
			c := r.u8(p)
			p++
			if r.err != nil {
				return ""
			}
			if i == 4 {
				r.fail("name at %#x: length too long", a)
				return ""
			}
			n |= uint64(c&0x7f) << k
			k += 7
			if c&0x80 == 0 {
				break
			}
		}
		if n > maxNameLen {
			r.fail("name at %#x: length %d", a, n)
			return ""
		}
		s, _ := r.bytes(p, n)
		p += n
		return s
	}
	name = str()
	if flags&nameHasTag != 0 {
		tag = str()
	}
	if flags&nameHasPkgPath != 0 && depth == 0 { // a package path has none
		pkgPath, _, _, _ = r.nameAt(r.off(p), 1)
	}
	return name, tag, pkgPath, flags&nameEmbedded != 0
}

// slice reads a slice header at a whose elements are size bytes: its data
// pointer and length, checked to lie in the section.
func (r *descReader) slice(a, size uint64) (uint64, uint64) {
	p, n, c := r.ptr(a), r.u64(a+8), r.u64(a+16)
	if n == 0 {
		return 0, 0
	}
	if n != c || n > maxArray || n > uint64(len(r.x.data))/size {
		r.fail("slice at %#x: length %d, capacity %d", a, n, c)
		return 0, 0
	}
	if !r.x.charge(n) {
		r.fail("slice at %#x: more fields and methods decoded than the types section could hold, %d times over", a, r.x.maxDecoded/max(1, r.x.maxParts))
		return 0, 0
	}
	r.bytes(p, n*size)
	return p, n
}

// charge counts n more parts decoded, and reports whether they are within
// maxDecoded.
func (x *descIndex) charge(n uint64) bool {
	if n > uint64(x.maxDecoded-x.decoded) {
		x.decoded = x.maxDecoded
		return false
	}
	x.decoded += int(n)
	return true
}

// kindSize returns the size of the descriptor of kind k before its uncommon
// data (abi.ArrayType, abi.ChanType, ...).
func (x *descIndex) kindSize(k reflect.Kind) uint64 {
	switch k {
	case reflect.Array:
		return 72
	case reflect.Chan:
		return 64
	case reflect.Func, reflect.Pointer, reflect.Slice:
		return 56
	case reflect.Interface, reflect.Struct:
		return 80
	case reflect.Map:
		if x.map127 {
			return 136 // abi.MapType: key, elem, group, hasher, 6 sizes, flags
		}
		if x.swiss {
			return 112 // abi.MapType: key, elem, group, hasher, 3 sizes, flags
		}
		return 88 // key, elem, bucket, hasher, 2 sizes, bucket size, flags
	}
	return abiTypeSize
}

// fixedSize is the size of a value of the kinds whose size does not vary.
var fixedSize = map[reflect.Kind]uint64{
	reflect.Bool: 1, reflect.Int: 8, reflect.Int8: 1, reflect.Int16: 2, reflect.Int32: 4, reflect.Int64: 8,
	reflect.Uint: 8, reflect.Uint8: 1, reflect.Uint16: 2, reflect.Uint32: 4, reflect.Uint64: 8, reflect.Uintptr: 8,
	reflect.Float32: 4, reflect.Float64: 8, reflect.Complex64: 8, reflect.Complex128: 16,
	reflect.Chan: 8, reflect.Func: 8, reflect.Interface: 16, reflect.Map: 8, reflect.Pointer: 8,
	reflect.Slice: 24, reflect.String: 16, reflect.UnsafePointer: 8,
}

// raw decodes the descriptor at the link address a, checking what can be
// checked: an address that is not a descriptor gives an error. Without
// names, it skips the names of fields and methods (for the walk).
func (x *descIndex) raw(a uint64) (*rawType, error) { return x.decode(a, true, &rawType{}) }

// decode decodes the descriptor at a into t, reusing its slices.
func (x *descIndex) decode(a uint64, names bool, t *rawType) (*rawType, error) {
	r := &descReader{x: x}
	*t = rawType{fields: t.fields[:0], in: t.in[:0], out: t.out[:0], imethods: t.imethods[:0]}
	if a%8 != 0 { // abi.Type holds pointers
		return nil, fmt.Errorf("no type descriptor at %#x: not aligned", a)
	}
	if err := x.decodeCommon(r, a, t); err != nil {
		return nil, err
	}
	switch t.kind {
	case reflect.Pointer, reflect.Slice:
		t.elem = r.typePtr(a + 48)
	case reflect.Array:
		t.elem, t.arrayLen = r.typePtr(a+48), r.u64(a+64)
		if t.arrayLen > maxTypeSize {
			r.fail("array length %d", t.arrayLen)
		}
	case reflect.Chan:
		t.elem, t.chanDir = r.typePtr(a+48), r.u64(a+56)
	case reflect.Map:
		t.key, t.elem = r.typePtr(a+48), r.typePtr(a+56)
	case reflect.Func:
		x.decodeFunc(r, a, t)
	case reflect.Interface:
		r.decodeInterface(a, names, t)
	case reflect.Struct:
		r.decodeStruct(a, names, t)
	}
	if r.err != nil {
		return nil, fmt.Errorf("corrupt type descriptor at %#x: %v", a, r.err)
	}
	return t, nil
}

// decodeCommon decodes the abi.Type at a, the part every descriptor
// starts with, into t: its size, kind, name and uncommon data. It returns
// an error if a holds no descriptor.
func (x *descIndex) decodeCommon(r *descReader, a uint64, t *rawType) error {
	r.bytes(a, abiTypeSize)
	if r.err != nil {
		return r.err
	}
	t.size = r.u64(a)
	ptrBytes := r.u64(a + 8)
	t.equal = r.ptr(a+24) != 0
	tflag := r.u8(a + 20)
	align, fieldAlign := r.u8(a+21), r.u8(a+22)
	t.kind = reflect.Kind(r.u8(a+23) & kindMask)
	pow2 := func(v uint8) bool { return v != 0 && v&(v-1) == 0 }
	switch {
	case t.kind == reflect.Invalid || t.kind > reflect.UnsafePointer:
		return fmt.Errorf("no type descriptor at %#x: kind %d", a, t.kind)
	case t.size > maxTypeSize || ptrBytes > t.size || !pow2(align) || !pow2(fieldAlign):
		return fmt.Errorf("no type descriptor at %#x: size %d, pointer bytes %d, alignment %d, %d", a, t.size, ptrBytes, align, fieldAlign)
	case fixedSize[t.kind] != 0 && t.size != fixedSize[t.kind]:
		return fmt.Errorf("no type descriptor at %#x: %v of %d bytes", a, t.kind, t.size)
	}
	t.str, _, _, _ = r.name(r.off(a + 40))
	if tflag&tflagExtraStar != 0 && len(t.str) > 0 {
		t.str = t.str[1:]
	}
	t.named = tflag&tflagNamed != 0
	if tflag&tflagUncommon != 0 {
		t.uncommon = a + x.kindSize(t.kind)
		if t.named {
			t.pkgPath, _, _, _ = r.name(r.off(t.uncommon))
		}
	}
	return nil
}

// decodeFunc decodes the parameters of the func type at a into t.
func (x *descIndex) decodeFunc(r *descReader, a uint64, t *rawType) {
	in, out := uint64(r.u16(a+48)), uint64(r.u16(a+50))
	t.variadic, out = out&(1<<15) != 0, out&(1<<15-1)
	if !x.charge(in + out) {
		r.fail("func type at %#x: more parameters decoded than the types section could hold", a)
	}
	p := a + 56
	if t.uncommon != 0 {
		p += uncommonSize
	}
	for i := range in + out {
		if r.err != nil {
			break
		}
		if i < in {
			t.in = append(t.in, r.typePtr(p+8*i))
		} else {
			t.out = append(t.out, r.typePtr(p+8*i))
		}
	}
}

// decodeInterface decodes the methods of the interface type at a into t,
// with their names if names is set.
func (r *descReader) decodeInterface(a uint64, names bool, t *rawType) {
	var pkg string
	if p := r.ptr(a + 48); p != 0 && names {
		pkg, _, _, _ = r.name(p)
	}
	p, n := r.slice(a+56, imethodSize)
	for i := range n {
		if r.err != nil {
			break
		}
		m := p + imethodSize*i
		var name, mpkg string
		if names {
			name, _, mpkg, _ = r.name(r.off(m))
			if mpkg == "" {
				mpkg = pkg
			}
		}
		t.imethods = append(t.imethods, rawMethod{name: name, pkgPath: mpkg, typ: r.off(m + 4)})
	}
}

// decodeStruct decodes the fields of the struct type at a into t, with
// their names if names is set.
func (r *descReader) decodeStruct(a uint64, names bool, t *rawType) {
	var pkg string
	if p := r.ptr(a + 48); p != 0 && names {
		pkg, _, _, _ = r.name(p)
	}
	p, n := r.slice(a+56, structFieldSize)
	for i := range n {
		if r.err != nil {
			break
		}
		f := p + structFieldSize*i
		var rf rawField
		if names {
			rf.name, rf.tag, rf.pkgPath, rf.embedded = r.name(r.ptr(f))
			if rf.pkgPath == "" {
				rf.pkgPath = pkg
			}
		}
		rf.typ, rf.offset = r.typePtr(f+8), r.u64(f+16)
		if rf.offset > t.size {
			r.fail("field %s of the type at %#x: offset %d past its size %d", rf.name, a, rf.offset, t.size)
		}
		t.fields = append(t.fields, rf)
	}
}

// methodTypes returns the types of the methods of the type at a, whose
// uncommon data is at u: what the walk follows besides the type's parts.
func (x *descIndex) methodTypes(u uint64) []uint64 {
	r := &descReader{x: x}
	n, moff := uint64(r.u16(u+4)), uint64(r.u32(u+8))
	if !x.charge(n) {
		return nil
	}
	var types []uint64
	for i := range n {
		m := u + moff + methodSize*i
		if o := int32(r.u32(m + 4)); o >= 0 && r.err == nil {
			if t := x.start + uint64(o); x.inSection(t) {
				types = append(types, t)
			}
		}
		if r.err != nil {
			break
		}
	}
	return types
}
