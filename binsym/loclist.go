package binsym

import "encoding/binary"

// locEntry is one location of a DWARF 5 location list: the link addresses
// [lo, hi) it covers (known is false for a range given by .debug_addr
// indexes, which are not read) and its expression.
type locEntry struct {
	lo, hi uint64
	known  bool
	expr   []byte
}

// locList5 reads the DWARF 5 location list at off in .debug_loclists and
// calls fn with each of its locations in order, until fn returns false.
// Go bases a function's lists on the function's entry (a base address
// index into .debug_addr, which is the entry), so a base address index
// stands for entry. It reports whether the list was read to its end, or to
// where fn stopped: false for a list cut short, malformed, or longer than
// maxLocEntries entries.
func locList5(data []byte, off, entry uint64, fn func(locEntry) bool) bool {
	if off >= uint64(len(data)) {
		return false
	}
	p := data[off:]
	uleb := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	base := entry
	for range maxLocEntries {
		if len(p) == 0 {
			return false
		}
		kind := p[0]
		p = p[1:]
		var e locEntry
		switch kind {
		case lleEnd:
			return true
		case lleBaseAddrx:
			if _, ok := uleb(); !ok {
				return false
			}
			base = entry
			continue
		case lleBaseAddr:
			if len(p) < 8 {
				return false
			}
			base = binary.LittleEndian.Uint64(p)
			p = p[8:]
			continue
		case lleOffsetPair:
			s, ok1 := uleb()
			t, ok2 := uleb()
			if !ok1 || !ok2 {
				return false
			}
			e.lo, e.hi, e.known = base+s, base+t, true
		case lleStartxEndx, lleStartxLen:
			_, ok1 := uleb()
			_, ok2 := uleb()
			if !ok1 || !ok2 {
				return false
			}
		case lleDefault:
			e.lo, e.hi, e.known = 0, ^uint64(0), true
		case lleStartEnd:
			if len(p) < 16 {
				return false
			}
			e.lo, e.hi, e.known = binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:]), true
			p = p[16:]
		case lleStartLen:
			if len(p) < 8 {
				return false
			}
			e.lo = binary.LittleEndian.Uint64(p)
			p = p[8:]
			n, ok := uleb()
			if !ok {
				return false
			}
			e.hi, e.known = e.lo+n, true
		default:
			return false
		}
		n, ok := uleb()
		if !ok || n > uint64(len(p)) {
			return false
		}
		e.expr = p[:n]
		p = p[n:]
		if !fn(e) {
			return true
		}
	}
	return false
}
