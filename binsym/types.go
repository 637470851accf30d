package binsym

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// typeIndex is the DWARF index built on first use: where each runtime type,
// named type, global and function is described.
type typeIndex struct {
	d      *dwarf.Data
	types  uint64 // link address of runtime.types
	byRT   map[uint64]dwarf.Offset
	byName map[string]dwarf.Offset
	global map[string]dwarf.Offset // global variable name -> its type
	funcs  map[uint64]dwarf.Offset // link entry -> subprogram

	mu        sync.Mutex
	r         *dwarf.Reader
	built     map[dwarf.Offset]*Type
	closures  map[uint64]*Type
	vars      map[stackVarKey]stackVarFound // StackObjectVar's answers
	frameVars map[frameVarKey]frameVarFound // FrameVar's answers
	pending   []*Type
	todo      []typeWork // types created and not yet filled, for build
	budget    int        // entries read may still decode (see read)
	err       error      // first error decoding a type

	// bySize holds the named struct types by size, built on first use
	// (containing.go).
	bySize map[int64][]dwarf.Offset
}

// LoadTypes decodes the executable's DWARF index if it has not been
// decoded yet, or without DWARF reads its runtime type descriptors. It
// returns the error that made types unavailable, if any, or else the first
// error met decoding a type (corrupt DWARF or descriptors; lookups of that
// type return nil, or a type named "?" where another type refers to it).
// For an executable whose DWARF cannot be read, it returns why, and types
// come from the descriptors.
// Type lookups call it; a caller may call it early, in its own goroutine,
// to overlap the work with reading a dump.
func (b *Binary) LoadTypes() error {
	if x := b.dwarfTypes(); x != nil {
		x.mu.Lock()
		defer x.mu.Unlock()
		return x.err
	}
	d := b.descIndex()
	switch {
	case d == nil && b.HasDWARF() && !b.forceDesc:
		return fmt.Errorf("%w; %w", b.typesErr, b.descErr)
	case d == nil:
		return b.descErr
	case b.HasDWARF() && !b.forceDesc:
		return fmt.Errorf("%w (types come from the runtime type descriptors)", b.typesErr)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// dwarfTypes returns the DWARF index if types come from DWARF, or nil if
// they come from the runtime type descriptors.
func (b *Binary) dwarfTypes() *typeIndex {
	if b.forceDesc {
		return nil
	}
	return b.typeIndex()
}

func (b *Binary) typeIndex() *typeIndex {
	b.typesOnce.Do(func() {
		b.types, b.typesErr = b.loadTypes()
	})
	return b.types
}

// dwarf returns the executable's DWARF and its .debug_info and
// .debug_abbrev sections.
// Compressed sections are inflated within the executable's limit (see
// InflateError).
func (b *Binary) dwarf() (d *dwarf.Data, info, abbrev []byte, err error) {
	sect := func(name string) ([]byte, error) {
		s := b.elf.Section(".debug_" + name)
		if s == nil {
			s = b.elf.Section(".zdebug_" + name)
		}
		if s == nil || s.Type == elf.SHT_NOBITS {
			return nil, nil
		}
		return b.sectionData(s)
	}
	info, err = sect("info")
	if err != nil {
		return nil, nil, nil, err
	}
	if info == nil {
		return nil, nil, nil, errors.New("no .debug_info section")
	}
	abbrev, err = sect("abbrev")
	if err != nil {
		return nil, nil, nil, err
	}
	str, err := sect("str")
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkDWARFUnits(info, abbrev); err != nil {
		return nil, nil, nil, err
	}
	// Only the sections that type, variable and function entries need:
	// decompressing line tables and location lists would double the cost.
	d, err = dwarf.New(abbrev, nil, nil, info, nil, nil, nil, str)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, name := range []string{"addr", "str_offsets", "line_str"} {
		data, err := sect(name)
		if err != nil {
			return nil, nil, nil, err
		}
		if data != nil {
			if err := d.AddSection(".debug_"+name, data); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return d, info, abbrev, nil
}

func (b *Binary) loadTypes() (*typeIndex, error) {
	if !b.HasDWARF() {
		return nil, fmt.Errorf("binary %s: no DWARF (linked with -w or -s)", b.path)
	}
	types, ok := b.linkSymbol("runtime.types")
	if !ok {
		return nil, fmt.Errorf("binary %s: no runtime.types symbol for DWARF's runtime types", b.path)
	}
	d, info, abbrev, err := b.dwarf()
	if err != nil {
		return nil, &OpenError{Path: b.path, Err: fmt.Errorf("reading DWARF: %w", err)}
	}
	x := &typeIndex{
		d:        d,
		types:    types,
		byRT:     map[uint64]dwarf.Offset{},
		byName:   map[string]dwarf.Offset{},
		global:   map[string]dwarf.Offset{},
		funcs:    map[uint64]dwarf.Offset{},
		r:        d.Reader(),
		built:    map[dwarf.Offset]*Type{},
		closures: map[uint64]*Type{},
		budget:   readBudget(len(info)),
	}
	// Walk the top level of every compilation unit: types, globals and
	// functions. Children (fields, parameters, locals) are skipped and read
	// on demand. The units are split between a few goroutines.
	chunks := splitUnits(info, min(runtime.GOMAXPROCS(0), 4))
	// A walk ends by reading the first entry of the next part's first unit,
	// and debug/dwarf's Reader sets a DWARF 5 unit up, writing to it, on its
	// first visit: seeking to each of those units here, first, leaves the
	// walks only reading them.
	touch := d.Reader()
	for _, c := range chunks[1:] {
		touch.Seek(c[0])
	}
	parts := make([]*indexPart, len(chunks))
	var wg sync.WaitGroup
	for i, c := range chunks {
		wg.Go(func() { parts[i] = walkUnits(d, info, abbrev, c[0], c[1]) })
	}
	wg.Wait()
	named := map[string]bool{} // names whose DIE has a runtime type
	for _, p := range parts {
		if p.err != nil {
			return nil, fmt.Errorf("binary %s: reading DWARF: %v", b.path, p.err)
		}
		maps.Copy(x.byRT, p.byRT)
		maps.Copy(x.funcs, p.funcs)
		for name, off := range p.global {
			if _, dup := x.global[name]; !dup {
				x.global[name] = off
			}
		}
		for _, n := range p.names {
			if _, dup := x.byName[n.name]; !dup || n.rt && !named[n.name] {
				x.byName[n.name] = n.off
				named[n.name] = n.rt
			}
		}
	}
	return x, nil
}

// readBudget is how many DWARF entries reading the types of a .debug_info
// section of n bytes may decode: every entry takes a byte at least, and
// each is read a few times at most; and maxTypeDecodes at most, for each
// decode takes debug/dwarf about 55 ns (the 65,536 members of a struct,
// typed as the first of a chain of 10M structs each nested in the one
// before, decoded 85M entries in 6.1 s). A report on a real dump decodes a
// few thousand.
func readBudget(n int) int { return min(4*n+1<<16, maxTypeDecodes) }

// maxTypeDecodes is the most DWARF entries reading types decodes in all.
// Tests lower it.
var maxTypeDecodes = 1 << 23

// An indexPart is what walkUnits found in some compilation units.
type indexPart struct {
	byRT   map[uint64]dwarf.Offset
	names  []namedDIE
	global map[string]dwarf.Offset
	funcs  map[uint64]dwarf.Offset
	err    error
}

type namedDIE struct {
	name string
	off  dwarf.Offset
	rt   bool // the DIE has a runtime type
}

// splitUnits returns n or fewer ranges [start, end) of .debug_info offsets
// that hold whole compilation units and about the same number of bytes.
// Offsets are those of the units' first entries; a range ending at 0 ends
// at the end of the section.
func splitUnits(info []byte, n int) [][2]dwarf.Offset {
	var units []uint64 // offsets of the units' first entries
	for o := uint64(0); ; {
		u, ok := readUnitHeader(info, o)
		if !ok {
			break
		}
		units = append(units, u.first)
		o = u.end
	}
	if n < 2 || len(units) < 2*n {
		return [][2]dwarf.Offset{{0, 0}}
	}
	per := uint64(len(info)) / uint64(n)
	chunks := [][2]dwarf.Offset{}
	start := uint64(0)
	for _, u := range units[1:] {
		if u-start >= per && len(chunks) < n-1 {
			chunks = append(chunks, [2]dwarf.Offset{dwarf.Offset(start), dwarf.Offset(u)})
			start = u
		}
	}
	return append(chunks, [2]dwarf.Offset{dwarf.Offset(start), 0})
}

// The index walk decodes every top-level entry with debug/dwarf's Reader,
// which takes about 55 ns and an allocation an entry, and keeps what it
// indexes in maps: its time and memory follow the entries, which can take
// a byte or two each. A walk over a share of .debug_info decodes that
// share of maxTopEntries entries, and indexes that share of
// maxIndexEntries names, functions, globals and runtime types, at most
// (4,096 more each), or fails. Go's cmd/go has 54,000 top-level entries
// and indexes 37,000; 64M one-byte entries took the walk 3.7 s, and 21M
// named ones of three bytes ran out of time. Tests lower them.
var (
	maxTopEntries   = 1 << 23
	maxIndexEntries = 1 << 20
)

// walkUnits indexes the top-level entries of the units in [start, end)
// of d's .debug_info section, info; end 0 is the section's end. With
// .debug_abbrev, abbrev, it skips children without decoding them
// (dwarfSkipper).
func walkUnits(d *dwarf.Data, info, abbrev []byte, start, end dwarf.Offset) (p *indexPart) {
	p = &indexPart{
		byRT:   map[uint64]dwarf.Offset{},
		global: map[string]dwarf.Offset{},
		funcs:  map[uint64]dwarf.Offset{},
	}
	defer func() {
		if r := recover(); r != nil {
			p.err = fmt.Errorf("corrupt DWARF: %v", r)
		}
	}()
	last := end
	if last == 0 {
		last = dwarf.Offset(len(info))
	}
	r := &entryReader{r: d.Reader(), start: start, end: last, left: 2 * (int(last) - int(start))}
	if abbrev != nil {
		r.skip = newDWARFSkipper(info, abbrev)
	}
	share := func(n int) int {
		return int(int64(n)*int64(last-start)/int64(max(len(info), 1))) + 1<<12
	}
	topLeft, indexLeft := share(maxTopEntries), share(maxIndexEntries)
	r.r.Seek(start)
	for {
		e, err := r.next()
		if err != nil {
			p.err = err
			return p
		}
		if e == nil || end != 0 && e.Offset >= end {
			return p
		}
		if topLeft--; topLeft < 0 {
			p.err = fmt.Errorf("corrupt DWARF: more than %d top-level entries in .debug_info offsets %#x to %#x", share(maxTopEntries), start, last)
			return p
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == 0 {
			continue
		}
		if e.Children {
			if err := r.skipChildren(e); err != nil {
				p.err = err
				return p
			}
		}
		before := len(p.names) + len(p.global) + len(p.funcs) + len(p.byRT)
		switch e.Tag {
		case dwarf.TagVariable:
			name, _ := e.Val(dwarf.AttrName).(string)
			if typ, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok && name != "" {
				if _, dup := p.global[name]; !dup {
					p.global[name] = typ
				}
			}
		case dwarf.TagSubprogram:
			if pc, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
				p.funcs[pc] = e.Offset
			}
		case dwarf.TagBaseType, dwarf.TagStructType, dwarf.TagTypedef, dwarf.TagPointerType,
			dwarf.TagArrayType, dwarf.TagSubroutineType, dwarf.TagUnspecifiedType:
			name, _ := e.Val(dwarf.AttrName).(string)
			rt, _ := e.Val(attrGoRuntimeType).(uint64)
			if rt != 0 {
				p.byRT[rt] = e.Offset
			}
			if name != "" {
				p.names = append(p.names, namedDIE{dropLocalSuffix(name), e.Offset, rt != 0})
			}
		}
		if indexLeft -= len(p.names) + len(p.global) + len(p.funcs) + len(p.byRT) - before; indexLeft < 0 {
			p.err = fmt.Errorf("corrupt DWARF: more than %d names, functions, globals and runtime types to index in .debug_info offsets %#x to %#x", share(maxIndexEntries), start, last)
			return p
		}
	}
}

// entryReader reads the entries of .debug_info offsets [start, end), and
// decodes at most left entries and attributes: twice the range's bytes. An
// entry takes a byte at least and so do most attributes; valid DWARF stays
// well within that. Two things corrupt DWARF does would not:
//   - At an abbreviation code cut by the end of its unit, debug/dwarf's
//     Reader returns a null entry for ever without moving
//     (golang/go#79586).
//   - Attributes without bytes (flag_present, implicit_const), up to
//     maxAbbrevAttrs an entry, make each byte cost hundreds of decoded
//     attributes (1 MB of such entries: 21 s).
type entryReader struct {
	r          *dwarf.Reader
	start, end dwarf.Offset
	left       int
	skip       *dwarfSkipper // nil: skip children with the Reader
	done       bool          // skipping children reached the end of the section
}

// next returns the next entry, nil at the end of the section.
func (er *entryReader) next() (*dwarf.Entry, error) {
	if er.done {
		return nil, nil
	}
	if er.left <= 0 {
		return nil, fmt.Errorf("corrupt DWARF: more entries and attributes than twice the bytes of .debug_info offsets %#x to %#x (an entry cut short, or attributes without bytes)", er.start, er.end)
	}
	e, err := er.r.Next()
	er.left--
	if e != nil {
		er.left -= len(e.Field)
	}
	return e, err
}

// skipChildren moves past the children of e, the entry just read, in a
// loop: debug/dwarf's SkipChildren calls itself once per level of
// nesting, which corrupt DWARF can make deep enough to overflow the stack
// (30 MB of nested entries). A sibling attribute is followed when it
// points past the entry, as SkipChildren does.
func (er *entryReader) skipChildren(e *dwarf.Entry) error {
	if er.skip != nil {
		if end, u, ok := er.skip.skipChildren(uint64(e.Offset)); ok {
			if end < u.end {
				er.r.Seek(dwarf.Offset(end))
				return nil
			}
			// The children end the unit: on at the next unit's first entry,
			// where the Reader would go, if it is one the skipper knows.
			first, atEnd, ok := er.skip.nextUnit()
			switch {
			case atEnd:
				er.done = true
				return nil
			case ok:
				er.r.Seek(dwarf.Offset(first))
				return nil
			}
		}
	}
	depth := 0 // the levels of children entered and not yet left
	for {
		// e has children: pass them by its sibling, or enter them.
		if sib, ok := e.Val(dwarf.AttrSibling).(dwarf.Offset); ok && sib > e.Offset {
			er.r.Seek(sib)
		} else {
			depth++
		}
		for e = nil; e == nil; {
			if depth == 0 {
				return nil
			}
			c, err := er.next()
			if err != nil || c == nil {
				return err
			}
			switch {
			case c.Tag == 0:
				depth--
			case c.Children:
				e = c
			}
		}
	}
}

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
