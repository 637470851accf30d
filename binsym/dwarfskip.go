package binsym

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// dwarfSkipper passes over DWARF entries by the sizes their abbreviations'
// forms give, without decoding them: the index walk skips every child of
// every top-level entry, and debug/dwarf's Reader makes a dwarf.Entry of
// each (hostile case nested-30m: 3.54 s rather than 0.69 s). Whatever it
// does not know (a form, an abbreviation code, a header) makes it give up,
// and the walk goes on with the Reader. It follows the walk forward through
// the unit headers, one at a time; its work is linear in the bytes it
// passes over, and parsing abbreviation tables is capped at a few times
// .debug_abbrev's size.
type dwarfSkipper struct {
	info, abbrev []byte
	unit         dwarfUnitHeader            // the unit of the last skip
	tables       map[uint64]map[uint64]abbr // by .debug_abbrev offset, then code
	abbrevWork   int                        // bytes of .debug_abbrev parsed so far
}

// dwarfUnitHeader is a .debug_info unit's header (readUnitHeader).
type dwarfUnitHeader struct {
	at, first, end   uint64 // offsets of the header, the first entry and the unit's end
	version          int
	unitType         byte // DWARF 5's; 0 before
	addrSize, offLen uint64
	abbrevOff        uint64
}

// readUnitHeader reads the header of the unit at offset o of .debug_info
// info; ok is false when there is none or its length runs past info. first
// is where the version's layout puts the first entry: version, then unit
// type and address size (DWARF 5) or nothing (DWARF 2-4), abbreviation
// offset, address size (DWARF 2-4). The fields after the version are read
// only when first is within the unit.
func readUnitHeader(info []byte, o uint64) (u dwarfUnitHeader, ok bool) {
	le := binary.LittleEndian
	if o > uint64(len(info)) || uint64(len(info))-o < 4 {
		return u, false
	}
	l, hdr, offLen := uint64(le.Uint32(info[o:])), uint64(4), uint64(4)
	if l == 0xffffffff {
		if uint64(len(info))-o < 12 {
			return u, false
		}
		l, hdr, offLen = le.Uint64(info[o+4:]), 12, 8
	}
	if l > uint64(len(info))-o-hdr || l < 2 {
		return u, false
	}
	u = dwarfUnitHeader{at: o, end: o + hdr + l, offLen: offLen}
	p := o + hdr
	u.version = int(le.Uint16(info[p:]))
	p += 2
	if u.version >= 5 {
		if u.first = p + 2 + offLen; u.first <= u.end {
			u.unitType, u.addrSize, u.abbrevOff = info[p], uint64(info[p+1]), readOff(info[p+2:], offLen)
		}
	} else if u.first = p + offLen + 1; u.first <= u.end {
		u.abbrevOff, u.addrSize = readOff(info[p:], offLen), uint64(info[p+offLen])
	}
	return u, true
}

// abbr is one abbreviation: whether its entries have children, and the
// forms of their attributes.
type abbr struct {
	children bool
	forms    []uint64
}

// newDWARFSkipper returns a skipper over .debug_info info, whose
// abbreviations are in .debug_abbrev, abbrev.
func newDWARFSkipper(info, abbrev []byte) *dwarfSkipper {
	s := &dwarfSkipper{info: info, abbrev: abbrev, tables: map[uint64]map[uint64]abbr{}}
	s.unit, _ = s.header(0)
	return s
}

// header reads the unit header at offset o. A unit it cannot skip in (a
// type or skeleton unit, an unknown version, an address size that is not
// 1 to 8) has no entries for it: first is its end. ok is false for a
// malformed header, or none.
func (s *dwarfSkipper) header(o uint64) (u dwarfUnitHeader, ok bool) {
	u, ok = readUnitHeader(s.info, o)
	known := u.version >= 2 && u.version <= 4 || u.version == 5 && (u.unitType == 1 || u.unitType == 3) // DW_UT_compile, DW_UT_partial
	if !known || u.first > u.end || u.addrSize == 0 || u.addrSize > 8 {
		u.first = u.end // every form but those without bytes then takes one at least
	}
	return u, ok
}

// unitAt moves to the unit that holds the entry at off, forward from the
// last one; ok is false when off is behind it or in no unit it can skip in.
func (s *dwarfSkipper) unitAt(off uint64) (*dwarfUnitHeader, bool) {
	if s.unit.end == 0 || off < s.unit.at {
		return nil, false
	}
	for s.unit.end <= off {
		u, ok := s.header(s.unit.end)
		if !ok {
			s.unit.end = 0 // none further
			return nil, false
		}
		s.unit = u
	}
	if off < s.unit.first {
		return nil, false
	}
	return &s.unit, true
}

// nextUnit returns the offset of the first entry of the unit after the
// current one, moving to it, or atEnd when the current one is the last. ok
// is false for a unit it cannot skip in, or a malformed header.
func (s *dwarfSkipper) nextUnit() (first uint64, atEnd, ok bool) {
	if s.unit.end == uint64(len(s.info)) {
		return 0, true, false
	}
	u, ok := s.header(s.unit.end)
	if !ok || u.first == u.end {
		return 0, false, false
	}
	s.unit = u
	return u.first, false, true
}

// readOff reads a little-endian offset of n (4 or 8) bytes.
func readOff(b []byte, n uint64) uint64 {
	if n == 8 {
		return binary.LittleEndian.Uint64(b)
	}
	return uint64(binary.LittleEndian.Uint32(b))
}

// skipChildren returns the offset just past the children of the entry at
// off, which has some, and the unit it is in; ok false when it gives up.
func (s *dwarfSkipper) skipChildren(off uint64) (end uint64, u *dwarfUnitHeader, ok bool) {
	u, ok = s.unitAt(off)
	if !ok {
		return 0, nil, false
	}
	table, ok := s.table(u.abbrevOff)
	if !ok {
		return 0, nil, false
	}
	b := s.info[:u.end]
	p, depth := off, 0
	for {
		code, ok := uleb(b, &p)
		if !ok {
			return 0, nil, false
		}
		if code == 0 {
			if depth--; depth <= 0 {
				return p, u, depth == 0
			}
			continue
		}
		a, known := table[code]
		if !known {
			return 0, nil, false
		}
		for _, f := range a.forms {
			if !s.skipForm(u, b, &p, f) {
				return 0, nil, false
			}
		}
		if a.children {
			depth++
		} else if depth == 0 {
			return 0, nil, false // the first entry must have children
		}
	}
}

// skipForm moves *p past a value of form f, if b holds it.
func (s *dwarfSkipper) skipForm(u *dwarfUnitHeader, b []byte, p *uint64, f uint64) bool {
	n := uint64(0)
	switch f {
	case 0x0b, 0x0c, 0x11, 0x25, 0x29: // data1, flag, ref1, strx1, addrx1
		n = 1
	case 0x05, 0x12, 0x26, 0x2a: // data2, ref2, strx2, addrx2
		n = 2
	case 0x27, 0x2b: // strx3, addrx3
		n = 3
	case 0x06, 0x13, 0x1c, 0x28, 0x2c: // data4, ref4, ref_sup4, strx4, addrx4
		n = 4
	case 0x07, 0x14, 0x20, 0x24: // data8, ref8, ref_sig8, ref_sup8
		n = 8
	case 0x1e: // data16
		n = 16
	case 0x01: // addr
		n = u.addrSize
	case 0x0e, 0x17, 0x1d, 0x1f, 0x1f20, 0x1f21: // strp, sec_offset, strp_sup, line_strp, GNU_ref_alt, GNU_strp_alt
		n = u.offLen
	case 0x10: // ref_addr
		n = u.offLen
		if u.version == 2 {
			n = u.addrSize
		}
	case 0x0d, 0x0f, 0x15, 0x1a, 0x1b, 0x22, 0x23, 0x1f01, 0x1f02: // sdata, udata, ref_udata, strx, addrx, loclistx, rnglistx, GNU indexes
		_, ok := uleb(b, p)
		return ok
	case 0x08: // string
		for *p < uint64(len(b)) {
			*p++
			if b[*p-1] == 0 {
				return true
			}
		}
		return false
	case 0x09, 0x18: // block, exprloc
		l, ok := uleb(b, p)
		if !ok {
			return false
		}
		n = l
	case 0x0a: // block1
		if *p+1 > uint64(len(b)) {
			return false
		}
		n = uint64(b[*p])
		*p++
	case 0x03: // block2
		if *p+2 > uint64(len(b)) {
			return false
		}
		n = uint64(binary.LittleEndian.Uint16(b[*p:]))
		*p += 2
	case 0x04: // block4
		if *p+4 > uint64(len(b)) {
			return false
		}
		n = uint64(binary.LittleEndian.Uint32(b[*p:]))
		*p += 4
	case 0x16: // indirect: the form comes first, and may not be indirect again
		g, ok := uleb(b, p)
		return ok && g != 0x16 && s.skipForm(u, b, p, g)
	default:
		return false
	}
	if n > uint64(len(b))-*p {
		return false
	}
	*p += n
	return true
}

// table returns the abbreviations at .debug_abbrev offset off, parsed on
// first use.
func (s *dwarfSkipper) table(off uint64) (map[uint64]abbr, bool) {
	if t, ok := s.tables[off]; ok {
		return t, t != nil
	}
	if s.abbrevWork > 4*len(s.abbrev)+4096 {
		return nil, false
	}
	t := map[uint64]abbr{}
	n, _, ok := parseAbbrevTable(s.abbrev, off, uint64(len(s.abbrev)), t)
	s.abbrevWork += int(n)
	if !ok {
		t = nil
	}
	s.tables[off] = t
	return t, ok
}

// maxAbbrevAttrs is the most attributes an abbreviation may have. Compilers
// give an entry a few dozen at most; debug/dwarf decodes all of an entry's
// attributes, which one byte of .debug_info can ask for.
const maxAbbrevAttrs = 256

// parseAbbrevTable parses the abbreviation table at offset off of abbrev,
// which must end (with a zero code) before offset limit and give no
// abbreviation more than maxAbbrevAttrs attributes, into t unless t is nil.
// Forms without bytes in .debug_info are left out of t's. It returns the
// bytes it read and the abbreviations it found.
func parseAbbrevTable(abbrev []byte, off, limit uint64, t map[uint64]abbr) (n uint64, count int, ok bool) {
	b := abbrev[:min(limit, uint64(len(abbrev)))]
	p := off
	ok = func() bool {
		for {
			code, ok := uleb(b, &p)
			if !ok {
				return false
			}
			if code == 0 {
				return true
			}
			if _, ok := uleb(b, &p); !ok || p >= uint64(len(b)) { // tag
				return false
			}
			a := abbr{children: b[p] == 1}
			p++
			count++
			attrs := 0
			for {
				attr, ok1 := uleb(b, &p)
				form, ok2 := uleb(b, &p)
				if !ok1 || !ok2 {
					return false
				}
				if attr == 0 && form == 0 {
					break
				}
				if form == 0x21 { // implicit_const: its value is here
					if _, ok := uleb(b, &p); !ok {
						return false
					}
				}
				if attrs++; attrs > maxAbbrevAttrs {
					return false
				}
				if t != nil && form != 0x19 && form != 0x21 { // flag_present, implicit_const: no bytes
					a.forms = append(a.forms, form)
				}
			}
			if _, dup := t[code]; !dup && t != nil {
				t[code] = a
			}
		}
	}()
	return p - off, count, ok
}

// maxAbbrevs is the most abbreviations, over all the tables that units
// name, checkDWARFUnits accepts. Go's linker writes one table of a few
// dozen for all Go code, a C compiler one of a hundred or so a unit; each
// costs debug/dwarf, and each of the index walk's skippers, a map entry.
const maxAbbrevs = 1 << 18

// maxDWARFUnits is the most compilation units checkDWARFUnits accepts: a Go
// program has one a package, and debug/dwarf keeps about 80 bytes a unit.
const maxDWARFUnits = 1 << 20

// checkDWARFUnits refuses, before debug/dwarf parses them, unit headers that
// would make it use far more memory or time than the sections' sizes: more
// than maxDWARFUnits units (5M empty units, 55 MB, took it 403 MiB and
// 3.5 s), abbreviation tables that run into one another, which it would
// parse once per offset a unit names (quadratic in .debug_abbrev's size),
// more than maxAbbrevs abbreviations or more than maxAbbrevAttrs attributes
// in one.
// It reads each header and each table once.
func checkDWARFUnits(info, abbrev []byte) error {
	var offs []uint64 // the abbreviation tables' offsets the units name
	units := 0
	for o := uint64(0); ; {
		u, ok := readUnitHeader(info, o)
		if !ok {
			break // debug/dwarf says what is wrong, if anything is
		}
		if units++; units > maxDWARFUnits {
			return fmt.Errorf("corrupt DWARF: .debug_info holds more than %d compilation units", maxDWARFUnits)
		}
		if u.first <= u.end {
			offs = append(offs, u.abbrevOff)
		}
		o = u.end
	}
	slices.Sort(offs)
	offs = slices.Compact(offs)
	abbrevs := 0
	for i, off := range offs {
		if off >= uint64(len(abbrev)) {
			continue // debug/dwarf refuses it
		}
		limit := uint64(len(abbrev))
		if i+1 < len(offs) {
			limit = offs[i+1]
		}
		_, count, ok := parseAbbrevTable(abbrev, off, limit, nil)
		if !ok {
			return fmt.Errorf("corrupt DWARF: the abbreviation table at .debug_abbrev offset %#x does not end before %#x, or gives an entry more than %d attributes", off, limit, maxAbbrevAttrs)
		}
		if abbrevs += count; abbrevs > maxAbbrevs {
			return fmt.Errorf("corrupt DWARF: its compilation units name more than %d abbreviations", maxAbbrevs)
		}
	}
	return nil
}

// uleb reads an unsigned LEB128 at *p, moving past it; a signed one has the
// same length. It fails at the end of b or past 10 bytes.
func uleb(b []byte, p *uint64) (uint64, bool) {
	var v uint64
	for i := uint(0); i < 10; i++ {
		if *p >= uint64(len(b)) {
			return 0, false
		}
		c := b[*p]
		*p++
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}
