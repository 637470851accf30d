package heapdump

import (
	"cmp"
	"slices"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/recent"
)

// A frame's stack objects (address-taken locals and arguments) are not in
// its pointer slots: the runtime's stack maps leave them out, and the
// garbage collector scans such an object only when a pointer it finds on
// the goroutine's stack (a live slot, or a pointer in another reached stack
// object) points into it: for example the value of a blocked `ch <- v`,
// which runtime.chansend keeps reachable through its argument. The frame's
// bytes are in the dump; Options.StackObjects says where the objects are
// and which of their words are pointers.

// maxStackObjectWords bounds the words a goroutine's reached stack objects
// contribute, so that a hostile binary's masks cannot make the build read
// the file word by word for ever: the runtime's largest stack is 1 GiB.
const maxStackObjectWords = 1 << 27

// frameObject is a stack object of one of a goroutine's frames, placed.
type frameObject struct {
	lo, hi  uint64 // its addresses
	owner   int    // depth of the frame whose object it is
	holder  int    // depth of the frame whose memory holds it (owner+1 for an argument)
	obj     *binsym.StackObject
	reached bool
}

// stackSlot is a pointer in a reached stack object: a slot of the root of
// the frame at depth owner.
type stackSlot struct {
	owner int
	slot  RootSlot
}

// stackObjectCache keeps the stack objects of each function, by entry,
// and the arrays stackObjectSlots reuses from one goroutine to the next
// rather than make for each of, say, 100,000 goroutines.
type stackObjectCache struct {
	fn     func(entry uint64) []binsym.StackObject
	objs   map[uint64][]binsym.StackObject
	recent recent.Cache[uint64, []binsym.StackObject] // in front of objs

	// indexes are the stack objects' places in Graph.stackObjects, plus 1.
	indexes map[*binsym.StackObject]uint32

	placed   []frameObject
	examined int // records looked at, for tests
	work     []int
	out      []stackSlot
	mem      []byte
}

// index returns 1 plus the index of obj in g.stackObjects, where it adds
// it the first time (RootSlot.stackObject).
func (c *stackObjectCache) index(g *Graph, obj *binsym.StackObject) uint32 {
	if i, ok := c.indexes[obj]; ok {
		return i
	}
	if c.indexes == nil {
		c.indexes = map[*binsym.StackObject]uint32{}
	}
	g.stackObjects = append(g.stackObjects, obj)
	i := uint32(len(g.stackObjects))
	c.indexes[obj] = i
	return i
}

func (c *stackObjectCache) of(entry uint64) []binsym.StackObject {
	if c.fn == nil {
		return nil
	}
	if objs, ok := c.recent.Get(recent.Hash(entry), entry); ok {
		return objs
	}
	objs, ok := c.objs[entry]
	if !ok {
		objs = c.fn(entry)
		for i := 1; i < len(objs); i++ {
			if objs[i].Off < objs[i-1].Off+objs[i-1].Size {
				objs = nil // out of order or overlapping: corrupt
				break
			}
		}
		if c.objs == nil {
			c.objs = map[uint64][]binsym.StackObject{}
		}
		c.objs[entry] = objs
	}
	c.recent.Put(recent.Hash(entry), entry, objs)
	return objs
}

// stackObjectSlots returns the pointer slots of the stack objects of
// goroutine gi's frames that a pointer on its stack reaches (a frame's
// slot, its panic, a closure one of its defers runs), sorted by the depth
// of the frame they belong to, valid until the next call with cache.
// defers is the dump's deferIndex. budget is what is left of
// maxStackObjectWords.
func (g *Graph) stackObjectSlots(gi int, frames []Frame, first int, defers deferClosures, cache *stackObjectCache, budget *int) []stackSlot {
	if cache.fn == nil {
		return nil
	}
	ps := uint64(g.words.size)
	lr := g.dump.Params.usesLR()
	fpBelowVarp := g.dump.Params.GOARCH == "amd64" || g.dump.Params.GOARCH == "arm64" // framepointer_enabled
	mf := g.dump.Params.minFrameSize()
	objs := cache.placed[:0]
	defer func() { cache.placed = objs[:0] }()
	for d := range frames {
		f := &frames[d]
		rec := cache.of(f.Entry)
		if len(rec) == 0 {
			continue
		}
		fp := f.SP + f.Size
		varp := fp
		if !lr {
			varp -= ps // the return address
		}
		if varp > f.SP && fpBelowVarp {
			varp -= ps // the saved frame pointer
		}
		// The records are in increasing order of offset, without
		// overlaps (stackObjectCache.of): the locals below the frame's SP
		// are skipped by a search, and the arguments past the caller's
		// frame end the loop, so that a frame costs the objects it and
		// its caller can hold, not every record of its function.
		below := int64(0) // no local fits a frame without bytes below varp
		if varp > f.SP {
			below = -int64(min(varp-f.SP, 1<<62))
		}
		k, _ := slices.BinarySearchFunc(rec, below, func(o binsym.StackObject, off int64) int { return cmp.Compare(o.Off, off) })
		for ; k < len(rec); k++ {
			cache.examined++
			o := &rec[k]
			var lo uint64
			holder := d
			if o.Off < 0 {
				lo = varp - uint64(-o.Off)
			} else {
				lo = fp + mf + uint64(o.Off)
				holder = d + 1
			}
			hi := lo + uint64(o.Size)
			// The object must lie in the bytes of the frame that holds it.
			if holder >= len(frames) || hi < lo {
				if o.Off >= 0 {
					break // no caller, or past the address space: so are the rest
				}
				continue
			}
			h := &frames[holder]
			if lo < h.SP || hi > h.SP+h.Size {
				if o.Off >= 0 && lo >= h.SP {
					break // past the caller's frame: so are the rest
				}
				continue
			}
			objs = append(objs, frameObject{lo: lo, hi: hi, owner: d, holder: holder, obj: o})
		}
	}
	if len(objs) == 0 {
		return nil
	}
	slices.SortFunc(objs, func(a, b frameObject) int { return cmp.Compare(a.lo, b.lo) })
	// find returns the object holding addr, or -1.
	find := func(addr uint64) int {
		i, _ := slices.BinarySearchFunc(objs, addr, func(o frameObject, a uint64) int {
			if o.hi <= a {
				return -1
			}
			if o.lo > a {
				return 1
			}
			return 0
		})
		if i < len(objs) && objs[i].lo <= addr && addr < objs[i].hi {
			return i
		}
		return -1
	}
	work := cache.work[:0]
	defer func() { cache.work = work[:0] }()
	reach := func(v uint64) {
		if i := find(v); i >= 0 && !objs[i].reached {
			objs[i].reached = true
			work = append(work, i)
		}
	}
	for d := range frames {
		for _, s := range g.dump.FrameSlots(first + d) {
			reach(s.Value)
		}
	}
	gr := &g.dump.Goroutines[gi]
	reach(gr.Panic) // panic records live on the stack
	for d := range defers.ofGoroutine(gr.Addr) {
		reach(d.fn) // a stack-allocated closure
	}
	out := cache.out[:0]
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		o := &objs[i]
		fi := first + o.holder
		base := o.lo - frames[o.holder].SP
		n := min(uint64(o.obj.PtrBytes), o.hi-o.lo)
		if n == 0 || *budget <= 0 {
			continue
		}
		*budget -= int(n / ps)
		// The object lies in the frame's bytes, which are in the file:
		// read a window of them at a time.
		c := Contents{src: g.src, off: frames[o.holder].contents, n: int64(frames[o.holder].Size)}
		cache.mem = slices.Grow(cache.mem[:0], int(min(n, MaxRead)))
		from, got := int64(-1), int64(0)
		for p := range o.obj.Pointers() {
			if uint64(p)+ps > n {
				break
			}
			if from < 0 || p < from || p+int64(ps) > from+got {
				from, got = p, min(int64(cap(cache.mem)), int64(n)-p)
				if c.ReadAt(cache.mem[:got], int64(base)+p) != nil {
					break
				}
			}
			v := g.words.word(cache.mem[:got], p-from)
			if v == 0 {
				continue
			}
			if find(v) >= 0 {
				reach(v)
				continue
			}
			out = append(out, stackSlot{owner: o.owner, slot: RootSlot{
				Frame: fi, Offset: base + uint64(p), Addr: o.lo + uint64(p), Value: v,
				stackObject: cache.index(g, o.obj), StackObjectOffset: base,
			}})
		}
	}
	slices.SortStableFunc(out, func(a, b stackSlot) int {
		return cmp.Or(cmp.Compare(a.owner, b.owner), cmp.Compare(a.slot.Offset, b.slot.Offset))
	})
	cache.out = out
	return out
}

// usesLR reports whether the architecture's calls leave the return address
// in a register rather than on the stack (internal/sys).
func (p *Params) usesLR() bool {
	switch p.GOARCH {
	case "amd64", "386", "wasm":
		return false
	}
	return true
}
