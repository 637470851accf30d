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
	base := entry
	for range maxLocEntries {
		if len(p) == 0 {
			return false
		}
		kind := p[0]
		p = p[1:]
		switch kind {
		case lleEnd:
			return true
		case lleBaseAddrx:
			var ok bool
			if _, p, ok = cutUvarint(p); !ok {
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
		}
		e, rest, ok := locBounds(kind, p, base)
		if !ok {
			return false
		}
		n, rest, ok := cutUvarint(rest)
		if !ok || n > uint64(len(rest)) {
			return false
		}
		e.expr = rest[:n]
		p = rest[n:]
		if !fn(e) {
			return true
		}
	}
	return false
}

// locBounds reads the addresses of a location list entry of the given
// kind from the front of p, offsets relative to base, and returns the rest
// of p. It reports false for a kind that is not a location or addresses
// cut short.
func locBounds(kind byte, p []byte, base uint64) (locEntry, []byte, bool) {
	var e locEntry
	switch kind {
	case lleOffsetPair:
		s, q, ok1 := cutUvarint(p)
		t, q, ok2 := cutUvarint(q)
		if !ok1 || !ok2 {
			return e, nil, false
		}
		e.lo, e.hi, e.known = base+s, base+t, true
		return e, q, true
	case lleStartxEndx, lleStartxLen:
		_, q, ok1 := cutUvarint(p)
		_, q, ok2 := cutUvarint(q)
		if !ok1 || !ok2 {
			return e, nil, false
		}
		return e, q, true
	case lleDefault:
		e.lo, e.hi, e.known = 0, ^uint64(0), true
		return e, p, true
	case lleStartEnd:
		if len(p) < 16 {
			return e, nil, false
		}
		e.lo, e.hi, e.known = binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:]), true
		return e, p[16:], true
	case lleStartLen:
		if len(p) < 8 {
			return e, nil, false
		}
		e.lo = binary.LittleEndian.Uint64(p)
		n, q, ok := cutUvarint(p[8:])
		if !ok {
			return e, nil, false
		}
		e.hi, e.known = e.lo+n, true
		return e, q, true
	}
	return e, nil, false
}

// cutUvarint reads an unsigned LEB128 number from the front of p and
// returns the rest of p, or false if p holds no complete number.
func cutUvarint(p []byte) (uint64, []byte, bool) {
	v, n := binary.Uvarint(p)
	if n <= 0 {
		return 0, p, false
	}
	return v, p[n:], true
}
