package binsym

import (
	"reflect"
	"strconv"
	"strings"
)

// Go 1.27 moved words of runtime.moduledata: it put typedesclen after types
// and itaboffset, itabsize after etypes, and dropped the typelinks and
// itablinks slices. The type descriptors the typelinks listed now come
// first in the types section, one after another, and the static itabs
// last (cmd/link's dodataSect; runtime.moduleTypelinks and addModuleItabs
// walk them).

// An mdLayout gives the indices of the moduledata words that moved.
type mdLayout struct {
	types, etypes, rodata, gofunc, epclntab int
	// typedesclen and itaboffset are 0 before Go 1.27; itabsize follows
	// itaboffset.
	typedesclen, itaboffset int
}

var (
	mdLayout120 = mdLayout{types: 37, etypes: 38, rodata: 39, gofunc: 40, epclntab: 41}
	mdLayout127 = mdLayout{types: 37, typedesclen: 38, etypes: 39, itaboffset: 40,
		rodata: 42, gofunc: 43, epclntab: 44}
)

// goMinor returns the minor release of the Go that built the executable
// (26 for "go1.26.8"), or false for a development version or none.
func (b *Binary) goMinor() (int, bool) {
	v, ok := strings.CutPrefix(b.goVersion, "go1.")
	if i := strings.IndexAny(v, ".-rcbeta "); i >= 0 {
		v = v[:i]
	}
	minor, err := strconv.Atoi(v)
	return minor, ok && err == nil
}

// mdLayout returns the module data's layout for the executable's Go
// release. Without a release number it tells them apart by the word
// after types: a length in the new layout, smaller than the address
// before it; etypes, larger, in the old.
func (b *Binary) mdLayout(m uint64) mdLayout {
	if minor, ok := b.goMinor(); ok {
		if minor >= 27 {
			return mdLayout127
		}
		return mdLayout120
	}
	if b.moduledataWord(m, 38) < b.moduledataWord(m, 37) {
		return mdLayout127
	}
	return mdLayout120
}

// staticWord returns the word at link address a, filled in by a RELATIVE
// relocation in a PIE.
func (b *Binary) staticWord(a uint64) uint64 {
	v := b.linkWord(a)
	if v == 0 && b.pie {
		v = b.relative(a)
	}
	return v
}

// typesRegions returns, for Go 1.27 and later, the types section's start,
// the end of its typelink descriptors and the bounds of its static itabs;
// ok is false for earlier releases and when the module data is not found.
func (b *Binary) typesRegions() (types, descEnd, itabStart, itabEnd uint64, ok bool) {
	m, found := b.moduledataAddr()
	if !found {
		return 0, 0, 0, 0, false
	}
	l := b.mdLayout(m)
	if l.typedesclen == 0 {
		return 0, 0, 0, 0, false
	}
	types = b.moduledataWord(m, l.types)
	etypes := b.moduledataWord(m, l.etypes)
	dlen := b.moduledataWord(m, l.typedesclen)
	ioff, isize := b.moduledataWord(m, l.itaboffset), b.moduledataWord(m, l.itabsize())
	if etypes < types || dlen > etypes-types || ioff > etypes-types || isize > etypes-types-ioff {
		return 0, 0, 0, 0, false
	}
	return types, types + dlen, types + ioff, types + ioff + isize, true
}

func (l mdLayout) itabsize() int { return l.itaboffset + 1 }

// staticItabs127 returns the link addresses of the static itabs of a Go
// 1.27 executable, walked as addModuleItabs does: each abi.ITab is Inter,
// Type, Hash and its methods (one word when Fun[0] is 0, which says Type
// does not implement Inter), 8-byte aligned.
func (b *Binary) staticItabs127() (map[uint64]bool, bool) {
	_, _, p, end, ok := b.typesRegions()
	if !ok {
		return nil, false
	}
	itabs := map[uint64]bool{}
	for p = align8(p); p+32 <= end; p = align8(p) {
		inter := b.staticWord(p)
		if inter == 0 {
			break
		}
		itabs[p] = true
		size := uint64(32)
		if b.staticWord(p+24) != 0 {
			n := b.linkWord(inter + 64) // len(InterfaceType.Methods)
			if n == 0 || n > (end-p)/8 {
				break
			}
			size += 8 * (n - 1)
		}
		p += size
	}
	return itabs, true
}

func align8(a uint64) uint64 { return (a + 7) &^ 7 }

// typelinks127 returns the addresses of a Go 1.27 executable's typelink
// descriptors, walked as runtime.moduleTypelinks does: from one word past
// the section's start, each 8-byte aligned and its abi.Type.DescriptorSize
// long. It stops at the first that does not decode; complete says
// whether the last ended where the typelink descriptors end.
func (x *descIndex) typelinks127(start, end uint64) (descs []uint64, complete bool) {
	r := &descReader{x: x}
	a := align8(start + 8)
	for ; a+abiTypeSize <= end; a = align8(a) {
		n := x.descriptorSize(r, a)
		if r.err != nil || n == 0 {
			break
		}
		descs = append(descs, a)
		a += n
	}
	return descs, a == end || align8(a) == align8(end)
}

// descriptorSize returns abi.Type.DescriptorSize of the descriptor at a:
// its kind's struct, its uncommon data, the parameters, interface methods
// or struct fields that follow, and its methods; 0 if a holds no
// descriptor.
func (x *descIndex) descriptorSize(r *descReader, a uint64) uint64 {
	k := reflect.Kind(r.u8(a+23) & kindMask)
	if r.err != nil || k == reflect.Invalid || k > reflect.UnsafePointer {
		return 0
	}
	size := x.kindSize(k)
	switch k {
	case reflect.Func:
		size += 8 * (uint64(r.u16(a+48)) + uint64(r.u16(a+50)&(1<<15-1)))
	case reflect.Interface:
		size += imethodSize * min(r.u64(a+64), maxArray)
	case reflect.Struct:
		size += structFieldSize * min(r.u64(a+64), maxArray)
	}
	if r.u8(a+20)&tflagUncommon != 0 {
		size += uncommonSize + methodSize*uint64(r.u16(a+x.kindSize(k)+4))
	}
	if r.err != nil {
		return 0
	}
	return size
}

// layout127 reports whether the executable has Go 1.27's module data and
// map type descriptors: by its release, or for a development version
// without module data, the newest.
func (b *Binary) layout127() bool {
	if minor, ok := b.goMinor(); ok {
		return minor >= 27
	}
	if m, ok := b.moduledataAddr(); ok {
		return b.mdLayout(m).typedesclen != 0
	}
	return true
}
