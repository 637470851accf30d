package heapdump

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	"github.com/ctxleak/ctxleak/internal/bigarray"
)

// Objects are numbered in dump order. The runtime dumps a span's objects
// consecutively, with ascending addresses and one size, leaving out free
// slots; spans come in allspans order, not by address. objIndex describes
// objects by groups of consecutive records that share a size and a stride,
// with a bitmap of which slots hold an object when some do not. That is a
// few bits per object instead of an address per object, and an address
// resolves to its object by a table lookup, a short scan and a division.

const (
	maxGroupObjects = 1024 // objects per group
	// markEvery is the number of records between two file offsets kept
	// in a group: ObjectRecord re-reads fewer than that to reach one.
	markEvery   = 32
	maxGroupGap = 64 // free slots between two objects of a group
	// runtimePage is the runtime's page size: spans start and end on a
	// multiple of it. A gap between two objects of a group is kept under
	// it, for a gap of a page or more may hold another span, which would
	// then lie inside the group and overlap it.
	runtimePage = 8 << 10
)

// group is a run of consecutive object records of one size whose addresses
// are base + k*size for ascending slots k.
type group struct {
	base  uint64 // address of the first object
	size  uint64 // size of every object
	slots uint32 // slots from base to the last object, inclusive
	count uint32 // objects in the group
	first uint32 // index of the first object
	words int32  // first word of the slot bitmap, or -1 when every slot holds an object
	file  int64  // file offset of the first object's record
	marks uint32 // index in objIndex.marks of the offset of the group's record markEvery
}

// recordAt returns the file offset of a record of group g at or before its
// object k (counted from the group's first), and that record's number.
func (x *objIndex) recordAt(g *group, k uint32) (int64, uint32) {
	j := k / markEvery
	if j == 0 {
		return g.file, 0
	}
	return x.marks[g.marks+j-1], j * markEvery
}

func (g *group) end() uint64 { return g.base + uint64(g.slots)*g.size }

// recordsEnd returns a file offset at or past the end of group gi's
// records: where the next group's begin, or the file's end (size).
func (x *objIndex) recordsEnd(gi int, size int64) int64 {
	if gi+1 < len(x.groups) && x.groups[gi+1].file > x.groups[gi].file {
		return x.groups[gi+1].file
	}
	return size
}

// entry is a group as the address lookup sees it, sorted by base: its
// range and what turns an address into an object, together, so that a
// lookup that misses its hint reads one entry's cache line, not two.
type entry struct {
	base  uint64
	end   uint64
	size  uint64
	magic uint64 // ^uint64(0)/size + 1: slot = high word of offset*magic
	first uint32
	words int32
}

type objIndex struct {
	groups []group  // in dump order, so ascending first
	marks  []int64  // file offsets of every group's records markEvery, 2*markEvery...
	bits   []uint64 // slot bitmaps of sparse groups
	rank   []uint32 // per bitmap word: objects of its group in earlier words
	n      uint32   // objects
	sealed bool     // a record other than an object came after the last group
	// noGaps keeps a group to consecutive slots. Free slots are not in the
	// dump, so a gap may also hold other spans: when finish finds that a
	// group with gaps overlaps another, the dump is read again this way.
	noGaps bool
	gapped bool // some group has free slots

	// Built by finish.
	entries []entry  // groups sorted by base
	lo, hi  uint64   // address range of all objects
	shift   uint     // bucket granularity
	bucket  []uint32 // bucket b: first entry ending after lo + b<<shift
}

// add appends an object. The caller has checked that addr and size are
// aligned and that addr+size does not overflow.
func (x *objIndex) add(addr, size uint64, file int64) error {
	if x.n >= maxIndex {
		return ErrTooLarge
	}
	x.n++
	if len(x.groups) > 0 && !x.sealed {
		g := &x.groups[len(x.groups)-1]
		if size == g.size && g.count < maxGroupObjects {
			last := g.base + uint64(g.slots-1)*size
			gap := uint64(maxGroupGap + 1)
			if x.noGaps {
				gap = 1
			}
			if addr > last && (addr-last)%size == 0 && (addr-last)/size <= gap && addr-last-size < runtimePage {
				slot := g.slots - 1 + uint32((addr-last)/size)
				if slot != g.slots && g.words < 0 {
					x.gapped = true
					// First gap: from here on the group needs a bitmap.
					g.words = int32(len(x.bits))
					for s := uint32(0); s < g.slots; s += 64 {
						x.bits = bigarray.Append(x.bits, 0)
					}
					for s := uint32(0); s < g.slots; s++ {
						x.bits[uint32(g.words)+s/64] |= 1 << (s % 64)
					}
				}
				if g.words >= 0 {
					for uint32(len(x.bits)) <= uint32(g.words)+slot/64 {
						x.bits = bigarray.Append(x.bits, 0)
					}
					x.bits[uint32(g.words)+slot/64] |= 1 << (slot % 64)
				}
				if g.count%markEvery == 0 {
					x.marks = bigarray.Append(x.marks, file)
				}
				g.slots = slot + 1
				g.count++
				return nil
			}
		}
	}
	x.sealed = false
	x.groups = bigarray.Append(x.groups, group{base: addr, size: size, slots: 1, count: 1, first: x.n - 1, words: -1, file: file, marks: uint32(len(x.marks))})
	return nil
}

// overlapError reports two objects that claim the same memory.
type overlapError struct {
	file     int64
	addr     uint64
	prevAddr uint64
}

// finish builds the address lookup. It fails if two objects overlap.
func (x *objIndex) finish() *overlapError {
	x.rank = make([]uint32, len(x.bits))
	for gi := range x.groups {
		g := &x.groups[gi]
		if g.words >= 0 {
			r := uint32(0)
			for w := uint32(g.words); w < uint32(g.words)+(g.slots+63)/64; w++ {
				x.rank[w] = r
				r += uint32(bits.OnesCount64(x.bits[w]))
			}
		}
	}
	// The entries by base address.
	x.entries = make([]entry, len(x.groups))
	order, mask := groupsByBase(x.groups), uint64(1)<<orderBits(len(x.groups))-1
	for i := range x.entries {
		gi := i
		if order != nil {
			gi = int(order[i] & mask)
		}
		g := &x.groups[gi]
		x.entries[i] = entry{base: g.base, end: g.end(), size: g.size, magic: ^uint64(0)/g.size + 1, first: g.first, words: g.words}
	}
	for i := range x.entries {
		e := &x.entries[i]
		if i > 0 && e.base < x.entries[i-1].end {
			g := x.groups[x.groupOf(e.first)]
			return &overlapError{file: g.file, addr: e.base, prevAddr: x.entries[i-1].base}
		}
	}
	if len(x.entries) == 0 {
		return nil
	}
	x.lo = x.entries[0].base
	x.hi = x.entries[len(x.entries)-1].end
	// One bucket per heap page, fewer if the heap is sparse: at most two
	// per group or one per four objects, whichever is more.
	limit := uint64(max(2*len(x.entries)+64, min(int(x.n)/4, 1<<22)))
	x.shift = 13
	for (x.hi-x.lo)>>x.shift >= limit {
		x.shift++
	}
	nb := int((x.hi-1-x.lo)>>x.shift) + 1
	x.bucket = make([]uint32, nb+1)
	j := 0
	for b := 0; b <= nb; b++ {
		start := x.lo + uint64(b)<<x.shift
		for j < len(x.entries) && x.entries[j].end <= start {
			j++
		}
		x.bucket[b] = uint32(j)
	}
	return nil
}

// groupsByBase returns the groups' indexes in the order of their base
// addresses, each in the low orderBits bits of a word, or nil when they
// are in that order already. The spans of a dump come in no address
// order: 100,000 groups of a 10M-object heap sort as words, by base
// and then index, in a fifth of the time their entries sort by a
// comparison function.
func groupsByBase(groups []group) []uint64 {
	if len(groups) == 0 {
		return nil
	}
	lo, hi, sorted := groups[0].base, groups[0].base, true
	for i := 1; i < len(groups); i++ {
		b := groups[i].base
		sorted = sorted && b >= groups[i-1].base
		lo, hi = min(lo, b), max(hi, b)
	}
	if sorted {
		return nil
	}
	k := orderBits(len(groups))
	keys := make([]uint64, len(groups))
	if bits.Len64(hi-lo)+k <= 64 {
		for i := range groups {
			keys[i] = (groups[i].base-lo)<<k | uint64(i)
		}
		slices.Sort(keys)
		return keys
	}
	// Bases too far apart to share a word with an index: only a crafted
	// file has them.
	for i := range keys {
		keys[i] = uint64(i)
	}
	slices.SortStableFunc(keys, func(a, b uint64) int { return cmp.Compare(groups[a].base, groups[b].base) })
	return keys
}

// orderBits is the number of bits groupsByBase keeps an index of n
// groups in.
func orderBits(n int) int { return max(bits.Len(uint(n-1)), 1) }

// lookup returns the index of the object that contains addr. hint is the
// entry that resolved the previous address; it is checked first and updated.
func (x *objIndex) lookup(addr uint64, hint *int) (uint32, bool) {
	i := *hint
	if i >= len(x.entries) || addr < x.entries[i].base || addr >= x.entries[i].end {
		if addr < x.lo || addr >= x.hi {
			return 0, false
		}
		b := (addr - x.lo) >> x.shift
		i = int(x.bucket[b])
		j := min(int(x.bucket[b+1]), len(x.entries)-1)
		// The first entry ending after addr is in entries[i..j].
		if j-i > 8 {
			k, _ := slices.BinarySearchFunc(x.entries[i:j+1], addr+1, func(e entry, a uint64) int { return cmp.Compare(e.end, a) })
			i += k
		} else {
			for i < j && x.entries[i].end <= addr {
				i++
			}
		}
		if i >= len(x.entries) || addr < x.entries[i].base || addr >= x.entries[i].end {
			return 0, false
		}
		*hint = i
	}
	e := &x.entries[i]
	off := addr - e.base
	var slot uint64
	if off < 1<<32 && e.size < 1<<32 {
		slot, _ = bits.Mul64(off, e.magic)
	} else {
		slot = off / e.size
	}
	if e.words < 0 {
		return e.first + uint32(slot), true
	}
	w := uint64(e.words) + slot/64
	bit := uint64(1) << (slot % 64)
	word := x.bits[w]
	if word&bit == 0 {
		return 0, false // a free slot
	}
	return e.first + x.rank[w] + uint32(bits.OnesCount64(word&(bit-1))), true
}

// groupOf returns the group holding object i.
func (x *objIndex) groupOf(i uint32) int {
	k, found := slices.BinarySearchFunc(x.groups, i, func(g group, i uint32) int {
		if g.first < i {
			return -1
		}
		if g.first > i {
			return 1
		}
		return 0
	})
	if found {
		return k
	}
	return k - 1
}

// startsAt returns the object that starts at addr.
func (x *objIndex) startsAt(addr uint64) (uint32, bool) {
	hint := 0
	i, ok := x.lookup(addr, &hint)
	if !ok {
		return 0, false
	}
	e := &x.entries[hint] // the entry lookup used
	return i, (addr-e.base)%e.size == 0
}

// addr returns the address of object i, which must be < n.
func (x *objIndex) addr(i uint32) uint64 { return x.addrIn(&x.groups[x.groupOf(i)], i) }

// addrIn is addr for an object of group g.
func (x *objIndex) addrIn(g *group, i uint32) uint64 {
	k := i - g.first
	if g.words < 0 {
		return g.base + uint64(k)*g.size
	}
	for w := uint32(g.words); ; w++ {
		word := x.bits[w]
		if c := uint32(bits.OnesCount64(word)); k >= x.rank[w]+c {
			continue
		}
		k -= x.rank[w]
		for ; k > 0; k-- {
			word &= word - 1 // drop the lowest set bit
		}
		slot := uint64(w-uint32(g.words))*64 + uint64(bits.TrailingZeros64(word))
		return g.base + slot*g.size
	}
}

func (e *overlapError) msg() string {
	return fmt.Sprintf("object at %#x overlaps the object at %#x", e.addr, e.prevAddr)
}
