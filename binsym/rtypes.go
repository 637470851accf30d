package binsym

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Runtime type descriptors.
//
// Every type a Go program uses at run time has a descriptor
// (internal/abi.Type) in its module's types section, [runtime.types,
// runtime.etypes): the address that an empty interface's first word and an
// itab's Type hold. The descriptors stay in the executable when it is
// linked with -s -w, as `go run` and `go test` link. When the executable
// has no DWARF, types are decoded from them. The layout read here is that
// of Go 1.20 to 1.27 on 64-bit targets: abi.Type has not changed, the kind
// byte has carried flags above its low five bits until 1.26, and the map
// type descriptor grew when maps became swiss tables (1.24) and again with
// key and element strides (1.27).
//
// A descriptor gives a type's name as the runtime prints it, qualified by
// package names ("innerpkg.Item"), its kind, size, elements, key, array
// length, struct fields, parameters and methods. From these binsym rebuilds
// the name the linker gives the type and DWARF repeats, qualified by
// escaped package paths ("github.com/x/inner.Item", "gopkg.in/yaml%2ev3.Node"),
// unexported fields and methods of literals included ("struct { main.ctx
// context.Context }"), with the "noalg." prefix of the compiler's internal
// types (map groups, closure contexts). Checked against DWARF on every type
// of cmd/go and of test programs built by Go 1.22 to 1.27, names differ
// only (a type defined inside a function is "main.local" either way:
// the reader of DWARF drops the "·1" its linker adds, see dropLocalSuffix):
//   - for internal types whose parts have no equality function either,
//     like the arrays of a Go 1.23 map bucket, which get no "noalg."
//     prefix (nothing tells them from user types);
//   - for the group of a map whose keys or elements are over 128 bytes,
//     stored indirectly, which is named with pointers to them.
//
// The pointer words of a descriptor are link addresses; in a PIE they are
// zero in the file and filled in by R_*_RELATIVE relocations, which are
// read instead. Offsets (names, the method types) are relative to the
// section start.

// Layout of internal/abi on 64-bit targets.
const (
	abiTypeSize     = 48 // abi.Type
	uncommonSize    = 16 // abi.UncommonType
	structFieldSize = 24 // abi.StructField
	imethodSize     = 8  // abi.Imethod
	methodSize      = 16 // abi.Method

	tflagUncommon  = 1 << 0
	tflagExtraStar = 1 << 1
	tflagNamed     = 1 << 2
	kindMask       = 1<<5 - 1 // the kind byte's flags are above (Go 1.25 and earlier)

	nameHasTag     = 1 << 1
	nameHasPkgPath = 1 << 2
	nameEmbedded   = 1 << 3

	chanRecv = 1
	chanSend = 2

	maxNameLen   = 1 << 20 // longer names are corrupt
	maxArray     = 1 << 16 // more struct fields or interface methods are corrupt
	maxTypeSize  = 1 << 48 // larger sizes are corrupt
	maxNameDepth = 64      // deeper unnamed types are named by the runtime's string
)

// descIndex decodes the runtime type descriptors of an executable.
type descIndex struct {
	b      *Binary
	start  uint64 // link address of the types section (runtime.types)
	data   string // the section, [runtime.types, runtime.etypes): names are substrings of it
	swiss  bool   // maps are swiss tables (Go 1.24 and later)
	map127 bool   // abi.MapType has Go 1.27's key and element strides

	mu    sync.Mutex
	built map[uint64]*Type // by link address; nil for an invalid descriptor
	ptrTo map[*Type]*Type  // pointer types made up for slices' fields
	basic map[reflect.Kind]*Type
	err   error // the first corrupt descriptor met

	// What decoding keeps is bounded, so that a corrupt section whose
	// descriptors all claim the same long arrays cannot multiply the
	// memory: a valid one has at most one struct field per 24 bytes, and
	// composed names of a size near the runtime's names, which it holds.
	parts, maxParts         int // struct fields and parameters decoded and kept
	nameBytes, maxNameBytes int // bytes of the names composed
	// decoded counts the fields, parameters and methods every decode
	// reads, kept or not: up to maxArray a descriptor, whose arrays a
	// corrupt section can make them all share. It may reach maxDecoded,
	// a few times maxParts: the walk and the builds decode a valid
	// descriptor once each.
	decoded, maxDecoded int

	// Filled by walk, on first need.
	walked  bool
	all     []uint64          // descriptors reachable from the module's tables
	byName  map[string]uint64 // named types among them
	headers map[string]*Type  // made-up map and channel headers, by name
	names   map[string]*Type  // every type built, by name: for typeByName
}

// descIndex returns the executable's type descriptors, reading the types
// section on first use, or nil if they cannot be read (b.descErr says why).
func (b *Binary) descIndex() *descIndex {
	b.descOnce.Do(func() {
		b.desc, b.descErr = b.loadDescriptors()
	})
	return b.desc
}

func (b *Binary) loadDescriptors() (*descIndex, error) {
	start, okS := b.linkSymbol("runtime.types")
	end, okE := b.linkSymbol("runtime.etypes")
	if !okS || !okE {
		m, ok := b.moduledataAddr()
		if !ok {
			return nil, fmt.Errorf("binary %s: no runtime.types symbol and no module data: runtime type descriptors are unknown", b.path)
		}
		l := b.mdLayout(m)
		start, end = b.moduledataWord(m, l.types), b.moduledataWord(m, l.etypes)
	}
	s := b.sectionAt(start)
	switch {
	case s == nil || s.Type == elf.SHT_NOBITS:
		return nil, fmt.Errorf("binary %s: the types section at %#x is not in the file", b.path, start)
	case end < start || end-start > s.Size-(start-s.Addr) || end-start > 1<<31:
		return nil, fmt.Errorf("binary %s: bad types section [%#x, %#x) in section %s", b.path, start, end, s.Name)
	}
	var data strings.Builder
	data.Grow(int(end - start))
	if _, err := io.Copy(&data, io.NewSectionReader(s, int64(start-s.Addr), int64(end-start))); err != nil {
		return nil, readError(b.path, "the types section", err)
	}
	if data.Len() != int(end-start) {
		return nil, readError(b.path, "the types section", io.ErrUnexpectedEOF)
	}
	return &descIndex{
		b:            b,
		start:        start,
		data:         data.String(),
		swiss:        b.swissMaps(),
		map127:       b.layout127(),
		built:        map[uint64]*Type{},
		ptrTo:        map[*Type]*Type{},
		basic:        map[reflect.Kind]*Type{},
		maxParts:     data.Len()/8 + maxArray,
		maxDecoded:   4 * (data.Len()/8 + maxArray),
		maxNameBytes: 16*data.Len() + maxNameLen,
	}, nil
}

// swissMaps reports whether the executable's maps are swiss tables: from Go
// 1.24 on, unless built with GOEXPERIMENT=noswissmap (1.24 and 1.25).
func (b *Binary) swissMaps() bool {
	minor, ok := b.goMinor()
	if !ok {
		return true // a development version: the latest layout
	}
	return minor >= 24 && !slices.Contains(strings.Split(b.experiments, ","), "noswissmap")
}

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
	r.bytes(a, abiTypeSize)
	if r.err != nil {
		return nil, r.err
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
		return nil, fmt.Errorf("no type descriptor at %#x: kind %d", a, t.kind)
	case t.size > maxTypeSize || ptrBytes > t.size || !pow2(align) || !pow2(fieldAlign):
		return nil, fmt.Errorf("no type descriptor at %#x: size %d, pointer bytes %d, alignment %d, %d", a, t.size, ptrBytes, align, fieldAlign)
	case fixedSize[t.kind] != 0 && t.size != fixedSize[t.kind]:
		return nil, fmt.Errorf("no type descriptor at %#x: %v of %d bytes", a, t.kind, t.size)
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
	case reflect.Interface:
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
	case reflect.Struct:
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
	if r.err != nil {
		return nil, fmt.Errorf("corrupt type descriptor at %#x: %v", a, r.err)
	}
	return t, nil
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

// typeAt returns the type whose descriptor is at the link address a, or
// nil if there is none.
func (x *descIndex) typeAt(a uint64) *Type {
	x.mu.Lock()
	defer x.mu.Unlock()
	if t, ok := x.built[a]; ok {
		return t
	}
	ts := x.build([]uint64{a})
	return ts[0]
}

// noteErr records the first corrupt descriptor. Called with x.mu held.
func (x *descIndex) noteErr(err error) {
	if x.err == nil {
		x.err = err
	}
}

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
		switch t.Kind {
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

// name sets the name of the pending type p, naming the unnamed types it is
// made of first. Called with x.mu held.
func (x *descIndex) name(p *pendingType, byType map[*Type]*pendingType, depth int) string {
	t, r := p.t, p.r
	switch {
	case p.state == 2:
		return t.Name
	case p.state == 1 || depth > maxNameDepth:
		return r.str // a cycle of unnamed types (corrupt) or a deep one
	}
	p.state = 1
	defer func() { p.state = 2 }()
	if t.Name = r.str; r.named {
		// A defined type is "pkgname.T" as the runtime prints it: the
		// linker writes the escaped package path instead of the package
		// name (type arguments in brackets are already in its form). A
		// predeclared type (int, error) has no package. The compiler's
		// shape types (go.shape.int) keep their package as it is.
		if _, rest, ok := strings.Cut(r.str, "."); ok && r.pkgPath != "" && r.pkgPath != "go.shape" {
			t.Name = pathToPrefix(r.pkgPath) + "." + rest
		}
		return t.Name
	}
	nameOf := func(c *Type) string {
		if c == nil {
			return "?"
		}
		if q := byType[c]; q != nil {
			x.name(q, byType, depth+1)
		}
		if c.noalg {
			return strings.TrimPrefix(c.Name, "noalg.") // only the outer name has it
		}
		return c.Name
	}
	nameAt := func(a uint64) *Type { return x.built[a] }
	var sb strings.Builder
	switch t.Kind {
	case reflect.Pointer:
		sb.WriteString("*" + nameOf(t.Elem))
	case reflect.Slice:
		sb.WriteString("[]" + nameOf(t.Elem))
	case reflect.Array:
		sb.WriteString("[" + strconv.FormatUint(r.arrayLen, 10) + "]" + nameOf(t.Elem))
	case reflect.Map:
		sb.WriteString("map[" + nameOf(t.Key) + "]" + nameOf(t.Elem))
	case reflect.Chan:
		elem := nameOf(t.Elem)
		switch r.chanDir {
		case chanRecv:
			sb.WriteString("<-chan " + elem)
		case chanSend:
			sb.WriteString("chan<- " + elem)
		default:
			if strings.HasPrefix(elem, "<-chan ") { // an unnamed receive-only channel
				elem = "(" + elem + ")"
			}
			sb.WriteString("chan " + elem)
		}
	case reflect.Func:
		sb.WriteString("func")
		x.signature(&sb, r, nameAt, nameOf)
	case reflect.Interface:
		if len(r.imethods) == 0 {
			sb.WriteString("interface {}")
			break
		}
		sb.WriteString("interface {")
		for i, m := range r.imethods {
			if sb.Len() > maxNameLen {
				break // corrupt: the name is refused
			}
			if i > 0 {
				sb.WriteByte(';')
			}
			sb.WriteString(" " + qualify(m.name, m.pkgPath))
			if mt := x.built[m.typ]; mt != nil && mt.Kind == reflect.Func {
				if q := byType[mt]; q != nil {
					x.signature(&sb, q.r, nameAt, nameOf)
				} else {
					sb.WriteString(strings.TrimPrefix(mt.Name, "func"))
				}
			}
		}
		sb.WriteString(" }")
	case reflect.Struct:
		if len(r.fields) == 0 {
			sb.WriteString("struct {}")
			break
		}
		if prefix, k, v := mapInternal(t, r); prefix != "" {
			sb.WriteString(prefix + nameOf(k) + "]" + nameOf(v))
			t.noalg = true
			break
		}
		sb.WriteString("struct {")
		for i, f := range r.fields {
			if sb.Len() > maxNameLen {
				break // corrupt: the name is refused
			}
			if i > 0 {
				sb.WriteByte(';')
			}
			sb.WriteByte(' ')
			ft := x.built[f.typ]
			ftName := nameOf(ft)
			switch {
			case f.embedded && embeddedName(ft) == f.name:
			case f.embedded:
				sb.WriteString(qualify(f.name, f.pkgPath) + " = ")
			default:
				sb.WriteString(qualify(f.name, f.pkgPath) + " ")
			}
			sb.WriteString(ftName)
			if f.tag != "" {
				sb.WriteString(" " + strconv.Quote(f.tag))
			}
		}
		sb.WriteString(" }")
	default:
		return t.Name
	}
	if !x.spend(sb.Len()) {
		return t.Name // the runtime's
	}
	t.Name = sb.String()
	if t.noalg || isNoalg(t) {
		t.noalg = true
		t.Name = "noalg." + t.Name
	}
	return t.Name
}

// isNoalg reports whether the unnamed struct or array type t is one of the
// compiler's internal types that the linker names with a "noalg." prefix:
// one that has no equality function although its parts have one, a
// closure's context struct { F uintptr; ... }, or a map group's slot
// struct { key K; elem V } and array of slots. Map groups are recognized
// by mapInternal. Other internal types whose parts cannot be compared
// cannot be told from user types, and have no prefix.
func isNoalg(t *Type) bool {
	if t.equal {
		return false
	}
	comparable := func(p *Type) bool { return p != nil && (p.equal || p.noalg) }
	switch t.Kind {
	case reflect.Array:
		return comparable(t.Elem)
	case reflect.Struct:
		if len(t.Fields) == 0 {
			return false
		}
		if f := t.Fields[0]; f.Name == "F" && f.Type != nil && f.Type.Kind == reflect.Uintptr {
			return true
		}
		if len(t.Fields) == 2 && t.Fields[0].Name == "key" && t.Fields[1].Name == "elem" {
			return true
		}
		for _, f := range t.Fields {
			if !comparable(f.Type) {
				return false
			}
		}
		return true
	}
	return false
}

// mapInternal recognizes the internal struct types of maps, which the
// runtime names as the linker does: a swiss map's group, "map.group[K]V"
// (struct { ctrl uint64; slots [8]struct { key K; elem V } }), and a Go
// 1.23 map's bucket, "map.bucket[K]V" (struct { topbits [8]uint8; keys
// [8]K; elems [8]V; overflow }). It returns the name up to the key and the
// key and element types (pointers where the map stores them indirectly),
// or "" for another type.
func mapInternal(t *Type, r *rawType) (prefix string, k, v *Type) {
	field := func(i int) *Type {
		if i < len(t.Fields) && t.Fields[i].Type != nil && t.Fields[i].Type.Kind == reflect.Array {
			return t.Fields[i].Type
		}
		return nil
	}
	switch {
	case strings.HasPrefix(r.str, "map.group[") && len(t.Fields) == 2:
		slots := field(1)
		if slots == nil || slots.Elem == nil || len(slots.Elem.Fields) != 2 {
			return "", nil, nil
		}
		return "map.group[", slots.Elem.Fields[0].Type, slots.Elem.Fields[1].Type
	case strings.HasPrefix(r.str, "map.bucket[") && len(t.Fields) == 4:
		keys, elems := field(1), field(2)
		if keys == nil || elems == nil {
			return "", nil, nil
		}
		return "map.bucket[", keys.Elem, elems.Elem
	}
	return "", nil, nil
}

// spend accounts for n bytes of a name about to be composed, and reports
// whether it may be: names longer than a valid section allows are corrupt.
// Called with x.mu held.
func (x *descIndex) spend(n int) bool {
	if n > maxNameLen || x.nameBytes+n > x.maxNameBytes {
		x.noteErr(fmt.Errorf("corrupt type descriptors: names longer than the types section allows"))
		return false
	}
	x.nameBytes += n
	return true
}

// signature writes a func type's parameters and results as the linker
// names them: "(int, ...string) (int, error)".
func (x *descIndex) signature(sb *strings.Builder, r *rawType, typeAt func(uint64) *Type, nameOf func(*Type) string) {
	sb.WriteByte('(')
	for i, a := range r.in {
		if sb.Len() > maxNameLen {
			break // corrupt: the name is refused
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		if s := typeAt(a); i == len(r.in)-1 && r.variadic && s != nil && s.Kind == reflect.Slice {
			sb.WriteString("..." + nameOf(s.Elem))
			continue
		}
		sb.WriteString(nameOf(typeAt(a)))
	}
	sb.WriteByte(')')
	switch len(r.out) {
	case 0:
	case 1:
		sb.WriteString(" " + nameOf(typeAt(r.out[0])))
	default:
		sb.WriteString(" (")
		for i, a := range r.out {
			if sb.Len() > maxNameLen {
				break // corrupt: the name is refused
			}
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(nameOf(typeAt(a)))
		}
		sb.WriteByte(')')
	}
}

// embeddedName returns the field name that embedding t gives: the name of
// t, or of what t points to, without its package.
func embeddedName(t *Type) string {
	if t == nil {
		return ""
	}
	if t.Kind == reflect.Pointer && t.Elem != nil && strings.HasPrefix(t.Name, "*") {
		t = t.Elem // an unnamed pointer type
	}
	name := t.Name
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i] // a generic type's arguments hold dots
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return t.Name[i+1:]
	}
	return t.Name
}

// qualify returns the name of a struct field or method as the linker
// writes it: an unexported one is qualified by its package path.
func qualify(name, pkgPath string) string {
	if name == "" || pkgPath == "" || isExported(name) {
		return name
	}
	return pathToPrefix(pkgPath) + "." + name
}

func isExported(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsUpper(r)
}

// pathToPrefix escapes a package path as the linker does in symbol names
// (cmd/internal/objabi.PathToPrefix), and so in DWARF type names: a dot in
// the last element, '%', '"', spaces and control and non-ASCII bytes.
func pathToPrefix(s string) string {
	slash := strings.LastIndexByte(s, '/')
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '.' && i > slash || c == '%' || c == '"' || c >= 0x7f {
			const hex = "0123456789abcdef"
			sb.WriteByte('%')
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&0xf])
		} else {
			sb.WriteByte(c)
		}
	}
	return sb.String()
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
