package binsym

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sync"
)

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
