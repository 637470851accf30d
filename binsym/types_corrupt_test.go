package binsym

import (
	"bytes"
	"debug/dwarf"
	"encoding/binary"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// dwarfUnit encodes one DWARF 4 compilation unit for corrupt-type tests.
type dwarfUnit struct {
	info  []byte
	marks []uint32 // offsets of entries of note
}

// Abbreviations of the test units: 1 compile unit, 2 struct, 3 member, 4
// typedef without a Go kind (an alias of its target), 5 typedef with one.
var testAbbrev = []byte{
	1, 0x11, 1, 0x03, 0x08, 0, 0,
	2, 0x13, 1, 0x03, 0x08, 0x0b, 0x0f, 0, 0,
	3, 0x0d, 0, 0x03, 0x08, 0x49, 0x13, 0x38, 0x0f, 0, 0,
	4, 0x16, 0, 0x03, 0x08, 0x49, 0x13, 0, 0,
	5, 0x16, 0, 0x03, 0x08, 0x49, 0x13, 0x80, 0x52, 0x0b, 0, 0,
	0,
}

func newDWARFUnit() *dwarfUnit {
	// unit length (patched), version 4, abbrev offset 0, address size 8
	return &dwarfUnit{info: []byte{0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8}}
}

func (u *dwarfUnit) off() uint32 { return uint32(len(u.info)) }

func (u *dwarfUnit) die(abbrev byte, name string, rest ...any) uint32 {
	off := u.off()
	u.info = append(u.info, abbrev)
	u.info = append(u.info, name...)
	u.info = append(u.info, 0)
	for _, v := range rest {
		switch v := v.(type) {
		case uint32: // ref4
			u.info = binary.LittleEndian.AppendUint32(u.info, v)
		case byte: // data1 or udata under 128
			u.info = append(u.info, v)
		}
	}
	return off
}

func (u *dwarfUnit) end() { u.info = append(u.info, 0) }

func (u *dwarfUnit) index(t *testing.T) *typeIndex {
	t.Helper()
	binary.LittleEndian.PutUint32(u.info, uint32(len(u.info)-4))
	d, err := dwarf.New(testAbbrev, nil, nil, u.info, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &typeIndex{d: d, r: d.Reader(), built: map[dwarf.Offset]*Type{}, closures: map[uint64]*Type{}, budget: readBudget(len(u.info))}
}

// DWARF types that contain or define themselves, and long chains of them,
// end: no recursion follows them.
func TestCorruptDWARFTypes(t *testing.T) {
	const n = 10000
	u := corruptDWARFUnit(n)
	s, self, uo, aliases, named := u.marks[0], u.marks[1], u.marks[2], u.marks[3], u.marks[4]
	x := u.index(t)

	st := x.get(dwarf.Offset(s))
	if st == nil || len(st.Fields) != 1 || st.Fields[0].Type != st {
		t.Errorf("struct S: %+v", st)
	}
	if tt := x.get(dwarf.Offset(self)); tt == nil || tt.Name != "?" {
		t.Errorf("typedef of itself: %+v", tt)
	}
	if x.err == nil || !strings.Contains(x.err.Error(), "itself") {
		t.Errorf("error %v, want one about a typedef of itself", x.err)
	}
	if ut := x.get(dwarf.Offset(uo)); ut == nil || ut.Name != "U" {
		t.Errorf("typedef U: %+v", ut)
	}
	if at := x.get(dwarf.Offset(aliases)); at == nil || at.Name != "?" {
		t.Errorf("a chain of %d aliases: %+v, want a type named ?", n, at)
	}
	nt := x.get(dwarf.Offset(named))
	if nt == nil || nt.Name != "N" || nt.Size != 24 || nt.Kind != 25 {
		t.Errorf("a chain of %d named types: %+v, want N of 24 bytes", n, nt)
	}
}

// corruptDWARFUnit returns a unit with a struct S that contains itself, a
// typedef T of itself, typedefs U and V each defined as the other, a chain
// of n aliases and one of n named types, in that order in marks.
func corruptDWARFUnit(n int) *dwarfUnit {
	u := newDWARFUnit()
	u.die(1, "cu")
	// struct S { f S }: a struct that contains itself.
	s := u.off()
	u.die(2, "S", byte(16))
	u.die(3, "f", s, byte(0))
	u.end()
	// typedef T T: an alias of itself.
	self := u.off()
	u.die(4, "T", self)
	// typedefs U and V with a kind, each defined as the other.
	uo := u.off()
	vo := uo + 1 + 2 + 4 + 1
	u.die(5, "U", vo, byte(25))
	u.die(5, "V", uo, byte(25))
	aliases := u.off()
	for range n {
		u.die(4, "A", u.off()+1+2+4) // each refers to the next
	}
	u.die(2, "end", byte(8))
	u.end()
	named := u.off()
	for range n {
		u.die(5, "N", u.off()+1+2+4+1, byte(25))
	}
	u.die(2, "base", byte(24))
	u.end()
	u.end()
	u.marks = []uint32{s, self, uo, aliases, named}
	return u
}

// Structs nested in one another, each with a member of the next one's
// type: reading each decodes the ones inside it, quadratic in the depth
// but for the read budget, which stops it.
func TestNestedDWARFTypes(t *testing.T) {
	const n = 5000
	u := newDWARFUnit()
	u.die(1, "cu")
	first := u.off()
	for range n {
		next := u.off() + 4 + 8 // this struct, then its member
		u.die(2, "S", byte(8))
		u.die(3, "f", next, byte(0))
	}
	u.die(2, "end", byte(8))
	u.end()
	for range n {
		u.end()
	}
	u.end()
	x := u.index(t)
	budget := x.budget
	x.get(dwarf.Offset(first))
	if x.err != errReadBudget {
		t.Errorf("error %v, want %v", x.err, errReadBudget)
	}
	if x.budget < 0 || budget-x.budget > budget {
		t.Errorf("read %d entries, budget %d", budget-x.budget, budget)
	}
}

// Entries nested four million deep under a top-level struct: walkUnits
// skips them in a loop. debug/dwarf's SkipChildren recurses once per level,
// which under a 64 MiB stack limit is a fatal stack overflow (and, under
// the default 1 GB, at 30 MB of such entries).
func TestWalkUnitsDeepNesting(t *testing.T) {
	const n = 4 << 20
	u := newDWARFUnit()
	u.die(1, "cu")
	for range n {
		u.die(2, "", byte(8)) // a struct whose first child is the next
	}
	for range n + 1 {
		u.end()
	}
	u.die(4, "after", uint32(11)) // a typedef, at the top level again
	u.end()
	binary.LittleEndian.PutUint32(u.info, uint32(len(u.info)-4))
	d, err := dwarf.New(testAbbrev, nil, nil, u.info, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	for _, abbrev := range [][]byte{nil, testAbbrev} { // with debug/dwarf's Reader, then dwarfSkipper
		p := walkUnits(d, u.info, abbrev, 0, 0)
		if p.err != nil {
			t.Fatal(p.err)
		}
		if len(p.names) != 1 || p.names[0].name != "after" {
			t.Errorf("named top-level entries %v, want after alone", p.names)
		}
	}
}

// A unit that ends in the middle of an abbreviation code: debug/dwarf's
// Reader then returns a null entry for ever without moving
// (golang/go#79586), and walkUnits must stop with an error instead. Go
// 1.27's debug/dwarf reports the cut itself, as an underflow.
func TestWalkUnitsCutEntry(t *testing.T) {
	u := newDWARFUnit()
	u.die(1, "cu")
	u.die(4, "t", uint32(11))
	u.info = append(u.info, 0x80) // a uvarint that never ends
	binary.LittleEndian.PutUint32(u.info, uint32(len(u.info)-4))
	d, err := dwarf.New(testAbbrev, nil, nil, u.info, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, abbrev := range [][]byte{nil, testAbbrev} {
		p := walkUnits(d, u.info, abbrev, 0, 0)
		if p.err == nil || !strings.Contains(p.err.Error(), "cut short") && !strings.Contains(p.err.Error(), "underflow") {
			t.Errorf("error %v, want one about an entry cut short", p.err)
		}
	}
}

// dwarfSkipper passes over the children of every top-level entry of a real
// executable's DWARF to where debug/dwarf's Reader finds the next entry,
// without giving up on any.
func TestDWARFSkipperMatchesReader(t *testing.T) {
	t.Parallel()
	b := openExe(t)
	d, info, abbrev, err := b.dwarf()
	if err != nil {
		t.Fatal(err)
	}
	s := newDWARFSkipper(info, abbrev)
	r := d.Reader()
	skipped := 0
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == 0 || !e.Children {
			continue
		}
		end, _, ok := s.skipChildren(uint64(e.Offset))
		if !ok {
			t.Fatalf("gave up on the entry at %#x (%v)", e.Offset, e.Tag)
		}
		r.SkipChildren()
		next, err := r.Next()
		if err != nil || next == nil {
			t.Fatalf("after the entry at %#x: %v, %v", e.Offset, next, err)
		}
		// The next entry is a sibling, or the unit's closing null entry,
		// which debug/dwarf gives offset 0.
		if next.Tag != 0 && uint64(next.Offset) != end {
			t.Fatalf("children of the entry at %#x end at %#x, the Reader's at %#x", e.Offset, end, next.Offset)
		}
		skipped++
		if next.Tag != 0 && next.Children && next.Tag != dwarf.TagCompileUnit {
			r.Seek(next.Offset) // read it again as the loop's entry
		}
	}
	if skipped < 1000 {
		t.Errorf("skipped the children of %d entries, want thousands", skipped)
	}
}

// Unit headers that would make debug/dwarf use far more than the sections'
// sizes are refused before it parses them: more units than a program has,
// and abbreviation tables that run into one another.
func TestCheckDWARFUnits(t *testing.T) {
	empty := func(n int, abbrevOff func(i int) uint32) []byte {
		var info []byte
		for i := range n {
			info = binary.LittleEndian.AppendUint32(info, 7)
			info = append(info, 4, 0)
			info = binary.LittleEndian.AppendUint32(info, abbrevOff(i))
			info = append(info, 8)
		}
		return info
	}
	if err := checkDWARFUnits(empty(maxDWARFUnits, func(int) uint32 { return 0 }), testAbbrev); err != nil {
		t.Errorf("%d units: %v", maxDWARFUnits, err)
	}
	err := checkDWARFUnits(empty(maxDWARFUnits+1, func(int) uint32 { return 0 }), testAbbrev)
	if err == nil || !strings.Contains(err.Error(), "compilation units") {
		t.Errorf("%d units: error %v, want one about too many units", maxDWARFUnits+1, err)
	}
	// testAbbrev's second abbreviation starts at 7: a unit naming it reads
	// on to the table's end, through the one at 0.
	err = checkDWARFUnits(empty(2, func(i int) uint32 { return uint32(7 * i) }), testAbbrev)
	if err == nil || !strings.Contains(err.Error(), "does not end before 0x7") {
		t.Errorf("overlapping tables: error %v, want one naming offset 0x7", err)
	}
	if err := checkDWARFUnits(empty(2, func(int) uint32 { return 0 }), testAbbrev); err != nil {
		t.Errorf("two units sharing a table: %v", err)
	}
	// One table of more abbreviations than a program's DWARF has.
	var many []byte
	for code := range maxAbbrevs + 1 {
		many = binary.AppendUvarint(many, uint64(code+1))
		many = append(many, 0x13, 0, 0, 0)
	}
	err = checkDWARFUnits(empty(1, func(int) uint32 { return 0 }), append(many, 0))
	if err == nil || !strings.Contains(err.Error(), "abbreviations") {
		t.Errorf("%d abbreviations: error %v, want one about too many", maxAbbrevs+1, err)
	}
}

// A top-level entry whose children run to the end of its unit, the unit's
// own closing entry left out: the walk goes on at the next unit's first
// entry, or ends with the last unit, as debug/dwarf's Reader does.
func TestWalkUnitsChildrenEndUnit(t *testing.T) {
	unit := func(name string, open bool) []byte {
		u := newDWARFUnit()
		u.die(1, "cu")
		if open {
			u.die(2, name, byte(8))
			u.die(4, "inner", uint32(11))
			u.end() // closes the struct, not the unit
		} else {
			u.die(4, name, uint32(11))
			u.end()
		}
		binary.LittleEndian.PutUint32(u.info, uint32(len(u.info)-4))
		return u.info
	}
	for _, tc := range []struct {
		info []byte
		want []string
	}{
		{append(unit("A", true), unit("B", false)...), []string{"A", "B"}},
		{append(unit("B", false), unit("A", true)...), []string{"B", "A"}},
	} {
		d, err := dwarf.New(testAbbrev, nil, nil, tc.info, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, abbrev := range [][]byte{nil, testAbbrev} {
			p := walkUnits(d, tc.info, abbrev, 0, 0)
			var names []string
			for _, n := range p.names {
				names = append(names, n.name)
			}
			if p.err != nil || !slices.Equal(names, tc.want) {
				t.Errorf("skipper %v: names %q, error %v; want %q", abbrev != nil, names, p.err, tc.want)
			}
		}
	}
}

// Top-level entries of one byte whose abbreviation gives them 256
// attributes without bytes (flag_present): debug/dwarf decodes all of them
// for each byte, and the walk stops at twice the range's bytes in entries
// and attributes (1 MB of them took 21 s before).
func TestWalkUnitsAttributesWithoutBytes(t *testing.T) {
	abbrev := []byte{1, 0x11, 1, 0, 0, 2, 0x13, 0}
	for range maxAbbrevAttrs {
		abbrev = append(abbrev, 0x3f, 0x19) // DW_AT_external, flag_present
	}
	abbrev = append(abbrev, 0, 0, 0)
	const n = 1 << 20
	info := binary.LittleEndian.AppendUint32(nil, uint32(7+1+n+1))
	info = append(info, 4, 0, 0, 0, 0, 0, 8, 1)
	info = append(info, make([]byte, n)...)
	for i := range n {
		info[12+i] = 2
	}
	info = append(info, 0)
	if err := checkDWARFUnits(info, abbrev); err != nil {
		t.Fatal(err)
	}
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := walkUnits(d, info, abbrev, 0, 0)
	if p.err == nil || !strings.Contains(p.err.Error(), "attributes without bytes") {
		t.Errorf("error %v, want one about attributes without bytes", p.err)
	}
	// One more attribute is refused before debug/dwarf parses the table.
	more := append(abbrev[:len(abbrev)-3:len(abbrev)-3], 0x3f, 0x19, 0, 0, 0)
	if err := checkDWARFUnits(info, more); err == nil {
		t.Errorf("%d attributes in an abbreviation: no error", maxAbbrevAttrs+1)
	}
}

// oneUnit returns a DWARF 4 .debug_info of one compile unit (abbreviation
// 1) whose children are entries.
func oneUnit(entries []byte) []byte {
	info := binary.LittleEndian.AppendUint32(nil, uint32(7+1+len(entries)+1))
	info = append(info, 4, 0, 0, 0, 0, 0, 8, 1)
	info = append(info, entries...)
	return append(info, 0)
}

// Top-level entries of a byte or three each: debug/dwarf's Reader decodes
// each one, and the index keeps each name, so the walk decodes and indexes
// at most its share of maxTopEntries and maxIndexEntries (64M one-byte
// entries took it 3.7 s; 21M named base types of three bytes ran out of
// time). A Go program has far fewer: the test executable stays within
// them.
func TestWalkUnitsTopLevelCaps(t *testing.T) {
	defer func(top, index int) { maxTopEntries, maxIndexEntries = top, index }(maxTopEntries, maxIndexEntries)
	maxTopEntries, maxIndexEntries = 1<<14, 1<<12
	const n = 1 << 15
	walk := func(info, abbrev []byte) *indexPart {
		t.Helper()
		if err := checkDWARFUnits(info, abbrev); err != nil {
			t.Fatal(err)
		}
		d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return walkUnits(d, info, abbrev, 0, 0)
	}

	// Abbreviation 2: a struct without attributes or children.
	ones := bytes.Repeat([]byte{2}, n)
	p := walk(oneUnit(ones), []byte{1, 0x11, 1, 0, 0, 2, 0x13, 0, 0, 0, 0})
	if p.err == nil || !strings.Contains(p.err.Error(), "top-level entries") {
		t.Errorf("%d one-byte entries: error %v, want one about top-level entries", n, p.err)
	}
	p = walk(oneUnit(ones[:1<<13]), []byte{1, 0x11, 1, 0, 0, 2, 0x13, 0, 0, 0, 0})
	if p.err != nil {
		t.Errorf("%d one-byte entries: %v", 1<<13, p.err)
	}

	// Abbreviation 2: a base type named by an inline string.
	named := bytes.Repeat([]byte{2, 'a', 0}, 3<<12)
	p = walk(oneUnit(named), []byte{1, 0x11, 1, 0, 0, 2, 0x24, 0, 0x03, 0x08, 0, 0, 0})
	if p.err == nil || !strings.Contains(p.err.Error(), "to index") {
		t.Errorf("%d named entries: error %v, want one about what to index", 3<<12, p.err)
	}
	p = walk(oneUnit(named[:3<<11]), []byte{1, 0x11, 1, 0, 0, 2, 0x24, 0, 0x03, 0x08, 0, 0, 0})
	if p.err != nil || len(p.names) != 1<<11 {
		t.Errorf("%d named entries: %d names, error %v", 1<<11, len(p.names), p.err)
	}
}

// A struct of more than maxKids members is corrupt: read stops there
// rather than keep every member (64M one-byte members took 2.3 GB and more
// than 20 s). One of maxKids members reads.
func TestReadTooManyChildren(t *testing.T) {
	for _, members := range []int{maxKids, maxKids + 1} {
		u := newDWARFUnit()
		u.die(1, "cu")
		s := u.die(2, "main.S", byte(8))
		for range members {
			u.die(3, "", uint32(s), byte(0))
		}
		u.end()
		u.end()
		x := u.index(t)
		_, kids, err := x.read(dwarf.Offset(s))
		if members <= maxKids && (err != nil || len(kids) != members) {
			t.Errorf("%d members: %d children, error %v", members, len(kids), err)
		}
		if members > maxKids && (err == nil || !strings.Contains(err.Error(), "children")) {
			t.Errorf("%d members: error %v, want one about children", members, err)
		}
	}
}

// Reading types decodes maxTypeDecodes entries at most, in all: the
// members of a struct, typed as the first structs of a chain each nested
// in the one before, make each type read decode the rest of the chain
// (85M entries in 6.1 s, before the cap, for 65,536 members and a chain of
// 10M).
func TestReadTypesDecodeCap(t *testing.T) {
	defer func(n int) { maxTypeDecodes = n }(maxTypeDecodes)
	const chain, fields = 1 << 12, 1 << 8
	for _, limit := range []int{1 << 30, 1 << 16} {
		maxTypeDecodes = limit
		u := newDWARFUnit()
		u.die(1, "cu")
		s := u.die(2, "main.S", byte(8))
		first := s + 9 + 7*fields + 1 // past S, its members and their end
		for i := range uint32(fields) {
			u.die(3, "", first+3*i, byte(0))
		}
		u.end()
		for range chain {
			u.die(2, "", byte(8))
		}
		for range chain + 1 {
			u.end()
		}
		x := u.index(t)
		budget := x.budget
		x.get(dwarf.Offset(s))
		used := budget - x.budget
		t.Logf("cap %d: %d entries decoded", limit, used)
		if limit > 1<<20 && used <= 1<<16 {
			t.Errorf("without a cap: %d entries decoded, want more than %d for the test to mean anything", used, 1<<16)
		}
		if used > limit {
			t.Errorf("%d entries decoded, more than the cap of %d", used, limit)
		}
	}
}
