package heapdump

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/bigarray"
)

// Record tags and field kinds, as in src/runtime/heapdump.go.
const (
	tagEOF             = 0
	tagObject          = 1
	tagOtherRoot       = 2
	tagType            = 3
	tagGoroutine       = 4
	tagStackFrame      = 5
	tagParams          = 6
	tagFinalizer       = 7
	tagItab            = 8
	tagOSThread        = 9
	tagMemStats        = 10
	tagQueuedFinalizer = 11
	tagData            = 12
	tagBSS             = 13
	tagDefer           = 14
	tagPanic           = 15
	tagMemProf         = 16
	tagAllocSample     = 17

	fieldKindEol = 0
	fieldKindPtr = 1
)

var recordNames = [...]string{
	tagEOF:             "end-of-dump record",
	tagObject:          "object record",
	tagOtherRoot:       "other root record",
	tagType:            "type record",
	tagGoroutine:       "goroutine record",
	tagStackFrame:      "stack frame record",
	tagParams:          "params record",
	tagFinalizer:       "finalizer record",
	tagItab:            "itab record",
	tagOSThread:        "OS thread record",
	tagMemStats:        "memstats record",
	tagQueuedFinalizer: "queued finalizer record",
	tagData:            "data segment record",
	tagBSS:             "bss segment record",
	tagDefer:           "defer record",
	tagPanic:           "panic record",
	tagMemProf:         "memprof bucket record",
	tagAllocSample:     "alloc sample record",
}

const header = "go1.7 heap dump\n"

// Limits on what a record can mean, from the runtime.
const (
	// maxSegment bounds the data and bss segments, which are kept in
	// memory.
	maxSegment = 1 << 30
	// maxStack64 and maxStack32 bound a goroutine's stack, and so the sum
	// of its frames' sizes: the runtime doubles a stack up to
	// maxstackceiling (2 * 1e9 bytes on 64-bit systems, 2 * 250e6 on
	// 32-bit), so the largest is 1 GiB or 256 MiB.
	maxStack64 = 1 << 30
	maxStack32 = 1 << 28
	// maxProfStackDepth is the runtime's bound on the depth of a memory
	// profile bucket's stack (runtime/mprof.go).
	maxProfStackDepth = 1024
)

// parser reads a dump in one pass. Objects go into the index and their
// pointer values into one flat array; everything else into the Dump.
type parser struct {
	r *reader
	d *Dump

	haveParams bool
	ptrSize    uint64
	le64       bool // 8-byte little-endian pointers: the fast path
	order      binary.ByteOrder
	arenaLo    uint64 // pointers outside [arenaLo, arenaLo+arenaLen) are not heap pointers
	arenaLen   uint64
	shift      uint // log2(ptrSize)
	compact    bool // edges32 holds (value-arenaLo)>>shift; else edges64 holds values

	idx     objIndex
	counts  []uint8    // per object: its number of raw edges, 255 if in big
	big     []bigCount // objects with 255 raw edges or more
	edges32 []uint32
	edges64 []uint64

	slots   []Slot            // every frame's slots, flat
	funcs   []string          // the frames' function names, by Frame.fn
	funcIdx map[string]uint32 // index of each in funcs
	// lastFuncs is the index in funcs of the function of the last frame
	// read at each of the first depths (funcIndex).
	lastFuncs [16]struct {
		i  uint32
		ok bool
	}
	waitIdx map[string]uint32 // index of each wait reason in Dump.waitReasons
	samples []sample
	strs    map[string]string // interned function, file and wait-reason strings

	curG       int // goroutine whose frames may follow, or -1
	nextDepth  int
	stackBytes uint64 // sum of the sizes of curG's frames so far
	framesFrom int64  // file offset of the first frame record
	// recordsFrom holds, by record tag, the file offset of the first
	// record appendRecord appended of each kind.
	recordsFrom [tagAllocSample + 1]int64
	// stacks is the array the buckets' stacks are cut from, stackChunk
	// positions at a time: a million buckets are then a few hundred
	// allocations for the collector to track, not a million.
	stacks []binsym.Position

	recOff    int64   // file offset of the record being read
	src       *source // what the Contents it gives read (source)
	kept      int64   // estimated memory of the records other than objects
	keptLimit int64   // budget for kept and the objects' nodes and edges (see budget.go)
	held      int64   // the bytes the file holds, less its holes (heldBytes); 0 for its size
	perNode   int64   // estimated memory of an object's node, the reader's arrays included
	perEdge   int64   // estimated memory of a pointer's edge, the reader's arrays included
	segSeen   [2]bool // a data, a bss record was read
	groups    int     // object groups counted in kept

	// Reading the objects on two cores (speculate.go), and its settings.
	specMin     int64
	specAt      []float64
	stealMin    int64
	cutEvery    int64
	syncRecords int
	speculated  bool    // speculate was called
	help        helping // the parts read by the helper
	adopted     int     // parts whose records adopt took
	origin      int64   // file offset this parser started at
	stopAt      int64   // a part's parser reads no record from here on
	nextCut     int64   // a record from this offset on starts a new group

	offs []uint64 // scratch: field offsets
	win  []byte   // scratch: window of contents not in the buffer
	wOff int64    // file offset of win

	// populating counts roomToPopulate's goroutines, which read waits
	// for: none outlives Load.
	populating sync.WaitGroup
	// slowFrames has every frame record read by frame's general path,
	// not frameFast; tests set it.
	slowFrames bool
}

// bigCount is the number of raw edges of an object that has many.
type bigCount struct{ obj, n uint32 }

// sample is an alloc sample record.
type sample struct{ obj, bucket uint64 }

func newParser(r *reader) *parser {
	p := &parser{
		r:           r,
		d:           &Dump{Types: map[uint64]Type{}, Itabs: map[uint64]uint64{}},
		strs:        map[string]string{},
		funcIdx:     map[string]uint32{},
		waitIdx:     map[string]uint32{},
		curG:        -1,
		wOff:        -1,
		keptLimit:   sideLimit(r.size), // read lowers it for a sparse file
		specMin:     speculateMin,
		specAt:      []float64{speculateAt},
		stealMin:    stealMin,
		cutEvery:    cutEvery,
		syncRecords: syncRecords,
		stopAt:      math.MaxInt64,
	}
	p.help.next.Store(math.MaxInt64)
	return p
}

// run reads the whole dump.
func (p *parser) run() (err error) {
	r := p.r
	if r.m != nil {
		defer r.guardMapped(&err, debug.SetPanicOnFault(true))
	}
	r.rec = "dump"
	if err := r.fill(len(header), 0); err != nil || string(r.buf[r.pos:r.pos+len(header)]) != header {
		return r.errorf(0, "not a Go heap dump: the file does not start with %q", header)
	}
	r.pos += len(header)
	defer p.stopHelping()
	for {
		off := r.off()
		p.help.at.Store(off)
		if off >= p.help.next.Load() && p.adopt(off) {
			continue
		}
		p.reportRead()
		p.cutGroups(off)
		r.rec = "dump"
		if r.remaining() == 0 {
			return r.errorf(off, "unexpected end of file: no end-of-dump record")
		}
		tag, err := r.uvarint()
		if err != nil {
			return err
		}
		if tag >= uint64(len(recordNames)) {
			return r.errorf(off, "unknown record tag %d", tag)
		}
		r.rec = recordNames[tag]
		p.recOff = off
		if tag != tagStackFrame && tag != tagDefer && tag != tagPanic {
			p.curG = -1
		}
		if tag != tagObject {
			// A group is a run of consecutive records, so ObjectRecord can
			// re-read it from its start.
			p.idx.sealed = true
		}
		if tag == tagObject && p.compact && p.le64 {
			if !p.speculated {
				p.speculate(off)
			}
			// Put the tag back: objectsFast reads whole records.
			r.pos = int(off - r.base)
			if p.objectsFast() {
				if err := p.keepGroups(off); err != nil {
					return err
				}
				continue
			}
			r.pos++
		}
		switch tag {
		case tagEOF:
			if left := r.remaining(); left != 0 {
				return r.errorf(r.off(), "%d bytes after the end-of-dump record", left)
			}
			return p.finishFrames()
		case tagObject:
			if err = p.object(off); err == nil {
				err = p.keepGroups(off)
			}
		case tagOtherRoot:
			err = p.otherRoot()
		case tagType:
			err = p.typ()
		case tagGoroutine:
			err = p.goroutine()
		case tagStackFrame:
			err = p.frame(off)
		case tagParams:
			err = p.params(off)
		case tagFinalizer, tagQueuedFinalizer:
			err = p.finalizer(tag)
		case tagItab:
			err = p.itab()
		case tagOSThread:
			err = p.thread()
		case tagMemStats:
			err = p.memStats(off)
		case tagData, tagBSS:
			err = p.segment(tag, off)
		case tagDefer:
			err = p.deferRecord()
		case tagPanic:
			err = p.panicRecord()
		case tagMemProf:
			err = p.memProf()
		case tagAllocSample:
			err = p.allocSample()
		}
		if err != nil {
			return err
		}
	}
}

// ints reads len(dst) varints.
func (p *parser) ints(dst ...*uint64) error {
	for _, d := range dst {
		v, err := p.r.uvarint()
		if err != nil {
			return err
		}
		*d = v
	}
	return nil
}

// intern returns b as a string, one copy per distinct value, and counts
// the memory of a new one.
func (p *parser) intern(b []byte) string {
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	p.strs[s] = s
	p.kept += int64(len(s)) + stringCost
	return s
}

// waitReasonIndex returns 1 plus the index in Dump.waitReasons of wait
// reason b, added if new, or 0 for none.
func (p *parser) waitReasonIndex(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return 1 + p.indexIn(&p.d.waitReasons, p.waitIdx, b)
}

// funcIndex returns the index in p.funcs of function name b, added if new,
// for a frame at depth. Goroutines blocked in one place have frames of
// the same functions at the same depths: the name last seen at each of
// the first depths is compared before the index is asked.
func (p *parser) funcIndex(b []byte, depth int) uint32 {
	if depth >= len(p.lastFuncs) {
		return p.indexIn(&p.funcs, p.funcIdx, b)
	}
	last := &p.lastFuncs[depth]
	if last.ok && p.funcs[last.i] == string(b) {
		return last.i
	}
	i := p.indexIn(&p.funcs, p.funcIdx, b)
	last.i, last.ok = i, true
	return i
}

// indexIn returns the index of string b in *table, whose indexes idx
// keeps, adding it if new and counting its memory.
func (p *parser) indexIn(table *[]string, idx map[string]uint32, b []byte) uint32 {
	if i, ok := idx[string(b)]; ok {
		return i
	}
	i := uint32(len(*table))
	s := p.intern(b)
	*table = append(*table, s)
	idx[s] = i
	p.kept += stringCost
	return i
}

func (p *parser) needParams(off int64) error {
	if !p.haveParams {
		return p.r.errorf(off, "comes before the params record, so the pointer size is unknown")
	}
	return nil
}

func (p *parser) params(off int64) error {
	r := p.r
	if p.haveParams {
		return r.errorf(off, "second params record")
	}
	pp := &p.d.Params
	var err error
	if pp.BigEndian, err = r.bool(); err != nil {
		return err
	}
	psOff := r.off()
	var ps uint64
	if err := p.ints(&ps, &pp.ArenaStart, &pp.ArenaEnd); err != nil {
		return err
	}
	if ps != 4 && ps != 8 {
		return r.errorf(psOff, "pointer size %d is not 4 or 8", ps)
	}
	if pp.ArenaEnd < pp.ArenaStart || (ps == 4 && pp.ArenaEnd > 1<<32) {
		return r.errorf(psOff, "arena bounds [%#x, %#x) are impossible", pp.ArenaStart, pp.ArenaEnd)
	}
	if pp.GOARCH, err = r.string("GOARCH"); err != nil {
		return err
	}
	v, err := r.string("version")
	if err != nil {
		return err
	}
	pp.GoVersion, pp.Experiments = parseVersion(v)
	ncpuOff := r.off()
	ncpu, err := r.uvarint()
	if err != nil {
		return err
	}
	if ncpu > math.MaxInt32 {
		return r.errorf(ncpuOff, "CPU count %d is impossible", ncpu)
	}
	pp.PtrSize, pp.NCPU = int(ps), int(ncpu)

	p.haveParams = true
	p.ptrSize = ps
	p.order = binary.LittleEndian
	if pp.BigEndian {
		p.order = binary.BigEndian
	}
	p.le64 = ps == 8 && !pp.BigEndian
	p.shift = 3
	if ps == 4 {
		p.shift = 2
	}
	p.arenaLo, p.arenaLen = pp.ArenaStart, pp.ArenaEnd-pp.ArenaStart
	p.compact = p.arenaLen>>p.shift <= 1<<32
	return nil
}

// word decodes a pointer-sized word.
func (p *parser) word(b []byte) uint64 {
	if p.ptrSize == 8 {
		return p.order.Uint64(b)
	}
	return uint64(p.order.Uint32(b))
}

// wordAt returns the pointer-sized word at file offset off, from the read
// buffer if it holds it, else through a window read from the file.
func (p *parser) wordAt(off int64) (uint64, error) {
	r := p.r
	ps := int64(p.ptrSize)
	if r.inBuf(off, ps) {
		return p.word(r.buf[off-r.base:]), nil
	}
	if p.wOff < 0 || off < p.wOff || off+ps > p.wOff+int64(len(p.win)) {
		n := int64(64 << 10)
		if left := r.size - off; left < n {
			n = left
		}
		if cap(p.win) < int(n) {
			p.win = make([]byte, 64<<10)
		}
		p.win = p.win[:n]
		p.wOff = -1
		if err := r.readAt(p.win, off); err != nil {
			return 0, err
		}
		p.wOff = off
	}
	return p.word(p.win[off-p.wOff:]), nil
}

// fieldList reads a field list for contents of n bytes into p.offs,
// checking that each offset is aligned, inside the contents and part of at
// most runs ascending runs: one for an object or a segment, two for a
// frame (its outargs, then its locals). Reading words at the offsets then
// moves through the contents at most runs times.
func (p *parser) fieldList(n uint64, runs int) error {
	r := p.r
	p.offs = p.offs[:0]
	for {
		kOff := r.off()
		kind, err := r.uvarint()
		if err != nil {
			return err
		}
		if kind == fieldKindEol {
			return nil
		}
		if kind != fieldKindPtr {
			return r.errorf(kOff, "field kind %d is not a pointer (1) or the end of the list (0)", kind)
		}
		oOff := r.off()
		o, err := r.uvarint()
		if err != nil {
			return err
		}
		descent := len(p.offs) > 0 && o <= p.offs[len(p.offs)-1]
		if descent && runs > 1 {
			runs--
			descent = false
		}
		if err := p.checkField(o, n, oOff, descent); err != nil {
			return err
		}
		if uint64(len(p.offs)) >= 2*(n/p.ptrSize) {
			return r.errorf(oOff, "more than %d pointer fields for %d bytes", len(p.offs), n)
		}
		p.offs = append(p.offs, o)
	}
}

func (p *parser) checkField(o, n uint64, off int64, unordered bool) error {
	switch {
	case o%p.ptrSize != 0:
		return p.r.errorf(off, "field offset %d is not a multiple of the pointer size", o)
	case o >= n || n-o < p.ptrSize:
		return p.r.errorf(off, "field offset %d: its %d-byte pointer runs past the end of the %d-byte contents", o, p.ptrSize, n)
	case unordered:
		return p.r.errorf(off, "field offset %d does not follow the previous one", o)
	}
	return nil
}

// object reads an object record: it adds the object to the index and its
// pointer values that fall in the heap arenas to the raw edges.
func (p *parser) object(recOff int64) error {
	r := p.r
	if err := p.needParams(recOff); err != nil {
		return err
	}
	aOff := r.off()
	addr, err := r.uvarint()
	if err != nil {
		return err
	}
	n64, nOff, err := r.length("contents", math.MaxInt64)
	if err != nil {
		return err
	}
	n := uint64(n64)
	ps := p.ptrSize
	switch {
	case addr%ps != 0:
		return r.errorf(aOff, "object address %#x is not pointer-aligned", addr)
	case n == 0 || n%ps != 0:
		return r.errorf(nOff, "object size %d is not a positive multiple of the pointer size", n)
	case addr < p.arenaLo || n > p.arenaLen || addr-p.arenaLo > p.arenaLen-n:
		return r.errorf(aOff, "object [%#x, +%d) is outside the heap arenas [%#x, %#x)", addr, n, p.arenaLo, p.arenaLo+p.arenaLen)
	}
	if err := p.idx.add(addr, n, recOff); err != nil {
		return fmt.Errorf("%s: %w: more than %d objects", r.path, err, maxIndex)
	}
	mark := len(p.edges32) + len(p.edges64)
	if mark > maxIndex {
		return fmt.Errorf("%s: %w: more than %d pointers", r.path, ErrTooLarge, maxIndex)
	}
	if n > maxBuffered {
		err = p.largeObject(n)
	} else {
		if err := r.fill(int(n), nOff); err != nil {
			return err
		}
		cOff := r.off()
		r.pos += int(n)
		r.pin = cOff
		err = p.objectFields(cOff, n)
		r.pin = -1
	}
	if err != nil {
		return err
	}
	p.endObject(mark)
	return nil
}

// endObject records the number of raw edges of the object whose first raw
// edge is at mark.
func (p *parser) endObject(mark int) {
	c := len(p.edges32) + len(p.edges64) - mark
	if len(p.counts) == cap(p.counts) {
		p.counts = grow(p, p.counts, 1)
	}
	if c < 255 {
		p.counts = append(p.counts, uint8(c))
		return
	}
	p.counts = append(p.counts, 255)
	p.big = append(p.big, bigCount{obj: uint32(len(p.counts) - 1), n: uint32(c)})
}

// reserveEdges makes room for n more raw edges.
func (p *parser) reserveEdges(n int) {
	if p.compact && cap(p.edges32)-len(p.edges32) < n {
		p.edges32 = grow(p, p.edges32, n)
	} else if !p.compact && cap(p.edges64)-len(p.edges64) < n {
		p.edges64 = grow(p, p.edges64, n)
	}
}

// objectFields reads the field list of an object whose n bytes of contents
// start at file offset cOff and are pinned in the read buffer, and appends
// the pointer values that fall in the heap arenas to the raw edges.
func (p *parser) objectFields(cOff int64, n uint64) error {
	r := p.r
	ps := p.ptrSize
	lo, span, shift := p.arenaLo, p.arenaLen, p.shift
	p.reserveEdges(int(n / ps))
	edges32, edges64 := p.edges32, p.edges64
	defer func() { p.edges32, p.edges64 = edges32, edges64 }()
	prev := int64(-1)
	for {
		var o uint64
		// Fast path: a one-byte kind and a one-byte offset.
		if r.end-r.pos >= 2 && r.buf[r.pos+1] < 0x80 && r.buf[r.pos] == fieldKindPtr {
			o = uint64(r.buf[r.pos+1])
			r.pos += 2
		} else {
			kOff := r.off()
			kind, err := r.uvarint()
			if err != nil {
				return err
			}
			if kind == fieldKindEol {
				return nil
			}
			if kind != fieldKindPtr {
				return r.errorf(kOff, "field kind %d is not a pointer (1) or the end of the list (0)", kind)
			}
			if o, err = r.uvarint(); err != nil {
				return err
			}
		}
		if o%ps != 0 || o >= n || int64(o) <= prev {
			return p.checkField(o, n, r.off()-int64(uvarintLen(o)), true)
		}
		prev = int64(o)
		i := int(cOff-r.base) + int(o)
		var v uint64
		if p.le64 {
			v = binary.LittleEndian.Uint64(r.buf[i : i+8])
		} else {
			v = p.word(r.buf[i:])
		}
		if v-lo < span {
			if p.compact {
				edges32 = append(edges32, uint32((v-lo)>>shift))
			} else {
				edges64 = append(edges64, v)
			}
		}
	}
}

// objectsFast parses consecutive object records that lie whole in the read
// buffer, with 8-byte little-endian pointers and compact edges: the bulk of
// a dump. It stops, without consuming it, at a record that is not an
// object, is not all in the buffer, or is anything but ordinary, and leaves
// that record to the general path, which also reports errors. It reports
// whether it consumed at least one record.
func (p *parser) objectsFast() bool {
	r := p.r
	x := &p.idx
	end := r.end
	if lim := p.specStart() - r.base; lim < int64(end) {
		end = int(max(lim, int64(r.pos))) // a part the helper reads starts there
	}
	buf := r.buf[:end]
	pos0 := r.pos
	pos := pos0
	lo, span, shift := p.arenaLo, p.arenaLen, p.shift
	edges, counts := p.edges32, p.counts
	for pos < len(buf) && buf[pos] == tagObject {
		if pos+24 > len(buf) {
			break
		}
		p.cutGroups(r.base + int64(pos))
		// The address takes 5-8 bytes, the length 1 to 3.
		addr, i := uvarintAt(buf, pos+1)
		if i < 0 || i+2 > len(buf) {
			break
		}
		var n uint64
		if b := buf[i]; b < 0x80 {
			n, i = uint64(b), i+1
		} else if b2 := buf[i+1]; b2 < 0x80 {
			n, i = uint64(b&0x7f)|uint64(b2)<<7, i+2
		} else if n, i = uvarintAt(buf, i); i < 0 {
			break
		}
		if n == 0 || n > maxBuffered || n%8 != 0 || addr%8 != 0 ||
			addr < lo || n > span || addr-lo > span-n || x.n >= maxIndex || len(edges) > maxIndex {
			break
		}
		var next bool // the object is the next slot of the current group
		if gl := len(x.groups); gl > 0 {
			g := &x.groups[gl-1]
			next = g.size == n && g.words < 0 && g.count < maxGroupObjects && addr == g.base+uint64(g.slots)*n && !x.sealed
		}
		if p.kept+int64(len(x.groups)+1-p.groups)*groupCost+int64(x.n+1)*p.perNode+int64(len(edges))*p.perEdge > p.keptLimit {
			break // past the budget: the general path reports it
		}
		c := i
		i += int(n)
		if i >= len(buf) {
			break
		}
		if cap(edges)-len(edges) < int(n/8) {
			edges = grow(p, edges, int(n/8))
		}
		mark := len(edges)
		prev := -1
		ok := false
		for i < len(buf) {
			k := buf[i]
			if k == fieldKindEol {
				i++
				ok = true
				break
			}
			if k != fieldKindPtr || i+1 >= len(buf) {
				break
			}
			var o uint64
			if o = uint64(buf[i+1]); o < 0x80 {
				i += 2
			} else if i+2 < len(buf) && buf[i+2] < 0x80 {
				o = o&0x7f | uint64(buf[i+2])<<7
				i += 3
			} else if o, i = uvarintAt(buf, i+1); i < 0 {
				break
			}
			if o%8 != 0 || o >= n || int(o) <= prev {
				break
			}
			prev = int(o)
			v := binary.LittleEndian.Uint64(buf[c+int(o):])
			if v-lo < span {
				edges = append(edges, uint32((v-lo)>>shift))
			}
		}
		if !ok {
			edges = edges[:mark]
			break
		}
		if len(counts) == cap(counts) {
			counts = grow(p, counts, 1)
		}
		if c := len(edges) - mark; c < 255 {
			counts = append(counts, uint8(c))
		} else {
			counts = append(counts, 255)
			p.big = append(p.big, bigCount{obj: uint32(len(counts) - 1), n: uint32(c)})
		}
		// The next slot of the current group, or a new group.
		if next {
			g := &x.groups[len(x.groups)-1]
			if g.count%markEvery == 0 {
				x.marks = bigarray.Append(x.marks, r.base+int64(pos))
			}
			g.slots++
			g.count++
			x.n++
			pos = i
			continue
		}
		x.add(addr, n, r.base+int64(pos))
		pos = i
	}
	p.edges32, p.counts = edges, counts
	r.pos = pos
	return pos > pos0
}

// grow returns s with room for at least need more elements. Past the
// first megabyte of the file, it sizes the new array by extrapolating from
// the fraction of the file read so far, within 1.25 to 8 times the old
// size: pages beyond what is used are never touched, so a generous
// estimate costs address space, not memory, and saves the copies and page
// faults of repeated growth.
func grow[T any](p *parser, s []T, need int) []T { return growFrom(p, s, need, p.origin) }

// growFrom is grow for an array whose elements come from the part of the
// file after offset from (the frames, which follow the objects): it
// extrapolates from the fraction of that part read so far.
func growFrom[T any](p *parser, s []T, need int, from int64) []T {
	c := newRoom[T](p, len(s), cap(s), need, from, p.r.off())
	t := bigarray.Grow(s, c)
	if room := roomToPopulate(p, t, from); room != nil {
		populateAsync(&p.populating, room)
	}
	return t
}

// newRoom returns the room of an array of the records from offset from
// on that holds n of them and has room for room, grown for need more: with
// the parser at offset at, it extrapolates from the fraction of the file
// past from that the n came from (see grow).
func newRoom[T any](p *parser, n, room, need int, from, at int64) int {
	c := 2*room + need
	if done := at - from; done > 1<<20 {
		est := int(float64(n) * float64(p.r.size-from) / float64(done) * 1.1)
		// An estimate from the first MiB may be far off, so the array
		// grows at most 8 times, but the frames' arrays 64 times when the
		// budget has room for that many elements: their first estimate
		// comes when they hold about 10,000 frames, and 100,000
		// goroutines have 600,000, which growing 8 times would copy once
		// more (11 MB, 10 ms). Only the room within the budget is faulted
		// in (roomToPopulate).
		most := int64(8)
		if from != p.origin && 64*int64(room) <= budgetLeft[T](p) {
			most = 64
		}
		c = int(min(int64(max(est, room+room/4)), most*int64(room))) + need
	}
	return c
}

// roomToPopulate returns the room of t, just grown for the records from
// offset from on, that another goroutine is to fault in, or nil: for the
// records after the objects, which the parser reads on one core while the
// other is idle, from populateRoomMin bytes, and within what the budget
// has left, so that a file that makes the estimate large cannot make the
// room resident. (The objects' arrays grow while both cores parse.)
func roomToPopulate[T any](p *parser, t []T, from int64) []T {
	if from == p.origin {
		return nil
	}
	room := t[len(t):cap(t)]
	if left := budgetLeft[T](p); left < int64(len(room)) {
		room = room[:left]
	}
	var x T
	if int64(len(room))*int64(max(unsafe.Sizeof(x), 1)) < int64(populateRoomMin) {
		return nil
	}
	return room
}

// budgetLeft returns how many elements of type T what is left of the
// memory budget has room for, 0 when nothing is left.
func budgetLeft[T any](p *parser) int64 {
	var x T
	return max(p.keptLimit-p.total(), 0) / int64(max(unsafe.Sizeof(x), 1))
}

// populateAsync has the kernel fault in s (bigarray.Populate) on a goroutine
// that wg counts.
func populateAsync[T any](wg *sync.WaitGroup, s []T) {
	populates.Add(1)
	wg.Go(func() {
		populateMu.Lock()
		defer populateMu.Unlock()
		bigarray.Populate(s)
		if populated != nil {
			populated()
		}
	})
}

// populateMu lets one goroutine of populateAsync populate at a time: each
// holds its P in the kernel, and the four arrays of the frames' records
// populated at once held both of a 2-core machine's while the parser
// they were for waited.
var populateMu sync.Mutex

// populates counts the calls of populateAsync, and populated, if set, is
// called as each goroutine finishes; tests read and set them.
var (
	populates atomic.Int64
	populated func()
)

// populateRoomMin is the room in bytes from which roomToPopulate, and
// addRoots for its arrays, have it faulted in; tests lower it.
var populateRoomMin = uintptr(1 << 20)

// appendRecord appends r, a record of the kind tag, to s, which it grows
// as growFrom does: by what the rest of the file may hold of the kind,
// copied in steps a collection can interrupt.
func appendRecord[T any](p *parser, s []T, r T, tag int) []T {
	if len(s) == 0 {
		p.recordsFrom[tag] = p.recOff
	}
	if len(s) == cap(s) {
		s = growFrom(p, s, 1, p.recordsFrom[tag])
	}
	return append(s, r)
}

// uvarintAt decodes a uvarint at b[i:], returning the value and the index
// after it, or -1 if b ends first or the value overflows 64 bits.
func uvarintAt(b []byte, i int) (uint64, int) {
	if uint(i) < uint(len(b)) && b[i] < 0x80 {
		// One byte: most of a frame's values (depth, lengths, field
		// kinds and offsets) and many of an object's.
		return uint64(b[i]), i + 1
	}
	if i < 0 {
		return 0, -1
	}
	if i+8 <= len(b) {
		// Up to 8 bytes at once: find the last byte, keep the bytes up to
		// it and squeeze out the continuation bits.
		u := binary.LittleEndian.Uint64(b[i:])
		if stop := ^u & 0x8080808080808080; stop != 0 {
			n := bits.TrailingZeros64(stop) + 1 // bits up to and including the last byte's top bit
			x := u & (1<<n - 1) & 0x7f7f7f7f7f7f7f7f
			x = (x&0x7f007f007f007f00)>>1 | x&0x007f007f007f007f
			x = (x&0x3fff00003fff0000)>>2 | x&0x00003fff00003fff
			x = (x&0x0fffffff00000000)>>4 | x&0x000000000fffffff
			return x, i + n/8
		}
	}
	var v uint64
	for s := uint(0); s < 64; s += 7 {
		if i >= len(b) {
			return 0, -1
		}
		c := b[i]
		i++
		if c < 0x80 {
			if s == 63 && c > 1 {
				return 0, -1
			}
			return v | uint64(c)<<s, i
		}
		v |= uint64(c&0x7f) << s
	}
	return 0, -1
}

// largeObject reads the rest of an object record whose contents are too
// big for the buffer: it skips them, reads the field list, then reads the
// pointer words from the file.
func (p *parser) largeObject(n uint64) error {
	r := p.r
	cOff := r.off()
	r.skip(int64(n))
	if err := p.fieldList(n, 1); err != nil {
		return err
	}
	p.reserveEdges(len(p.offs))
	for _, o := range p.offs {
		v, err := p.wordAt(cOff + int64(o))
		if err != nil {
			return err
		}
		if v-p.arenaLo < p.arenaLen {
			if p.compact {
				p.edges32 = append(p.edges32, uint32((v-p.arenaLo)>>p.shift))
			} else {
				p.edges64 = append(p.edges64, v)
			}
		}
	}
	return nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func (p *parser) otherRoot() error {
	b, err := p.r.bytes("description")
	if err != nil {
		return err
	}
	desc := p.intern(b)
	var addr uint64
	if err := p.ints(&addr); err != nil {
		return err
	}
	if err := p.keep(int64(unsafe.Sizeof(OtherRoot{}))+rootCost+rootSlotCost, p.recOff); err != nil {
		return err
	}
	p.d.OtherRoots = appendRecord(p, p.d.OtherRoots, OtherRoot{Desc: desc, Addr: addr}, tagOtherRoot)
	return nil
}

func (p *parser) typ() error {
	var t Type
	if err := p.ints(&t.Addr, &t.Size); err != nil {
		return err
	}
	name, err := p.r.bytes("type name")
	if err != nil {
		return err
	}
	t.Name = p.intern(name)
	if t.DataPointer, err = p.r.bool(); err != nil {
		return err
	}
	if _, dup := p.d.Types[t.Addr]; !dup {
		if err := p.keep(int64(unsafe.Sizeof(t))+mapEntryCost, p.recOff); err != nil {
			return err
		}
	}
	p.d.Types[t.Addr] = t
	return nil
}

func (p *parser) itab() error {
	var addr, typ uint64
	if err := p.ints(&addr, &typ); err != nil {
		return err
	}
	if _, dup := p.d.Itabs[addr]; !dup {
		if err := p.keep(mapEntryCost, p.recOff); err != nil {
			return err
		}
	}
	p.d.Itabs[addr] = typ
	return nil
}

func (p *parser) goroutine() error {
	r := p.r
	var g Goroutine
	var status uint64
	if err := p.ints(&g.Addr, &g.SP, &g.ID, &g.GoPC, &status); err != nil {
		return err
	}
	g.Status = GStatus(status)
	var err error
	if g.System, err = r.bool(); err != nil {
		return err
	}
	if _, err = r.bool(); err != nil { // isbackground, always false
		return err
	}
	if err := p.ints(&g.WaitSince); err != nil {
		return err
	}
	b, err := r.bytes("wait reason")
	if err != nil {
		return err
	}
	g.waitReason = p.waitReasonIndex(b)
	if err := p.ints(&g.Ctxt, &g.M, &g.Defer, &g.Panic); err != nil {
		return err
	}
	g.FirstFrame = len(p.d.Frames)
	cost := int64(unsafe.Sizeof(g))
	if g.Ctxt != 0 {
		cost += rootCost + rootSlotCost
	}
	if err := p.keep(cost, p.recOff); err != nil {
		return err
	}
	p.d.Goroutines = appendRecord(p, p.d.Goroutines, g, tagGoroutine)
	p.curG = len(p.d.Goroutines) - 1
	p.nextDepth = 0
	p.stackBytes = 0
	return nil
}

// frame reads a stack frame record. Frames follow their goroutine record,
// innermost (depth 0) first.
func (p *parser) frame(recOff int64) error {
	r := p.r
	if err := p.needParams(recOff); err != nil {
		return err
	}
	if p.curG < 0 {
		return r.errorf(recOff, "stack frame record does not follow a goroutine record or its frames")
	}
	if !p.slowFrames && p.frameFast(recOff) {
		return nil
	}
	f := Frame{Goroutine: p.curG}
	var depth uint64
	if err := p.ints(&f.SP); err != nil {
		return err
	}
	dOff := r.off()
	if err := p.ints(&depth, &f.ChildSP); err != nil {
		return err
	}
	if depth != uint64(p.nextDepth) {
		return r.errorf(dOff, "frame depth %d, want %d", depth, p.nextDepth)
	}
	f.Depth = p.nextDepth
	maxStack := p.maxStack()
	n, nOff, err := r.length("frame contents", math.MaxInt64)
	if err != nil {
		return err
	}
	if uint64(n) > maxStack-p.stackBytes {
		return r.errorf(nOff, "frame of %d bytes: with the goroutine's %d frames before it, more than the largest stack (%d bytes)",
			n, p.nextDepth, maxStack)
	}
	p.stackBytes += uint64(n)
	f.Size = uint64(n)
	cOff := r.off()
	f.contents = cOff
	if n <= maxBuffered {
		if err := r.fill(int(n), nOff); err != nil {
			return err
		}
		r.pin = cOff
		defer func() { r.pin = -1 }()
	}
	r.skip(n)
	if err := p.ints(&f.Entry, &f.PC, &f.ContPC); err != nil {
		return err
	}
	name, err := r.bytes("function name")
	if err != nil {
		return err
	}
	f.fn = p.funcIndex(name, f.Depth)
	// Outargs and locals each come in ascending order, not the two
	// together, so a slot may appear twice but no more.
	if err := p.fieldList(f.Size, 2); err != nil {
		return err
	}
	if len(p.slots)+len(p.offs) > maxIndex {
		return fmt.Errorf("%s: %w: more than %d frame slots", r.path, ErrTooLarge, maxIndex)
	}
	if err := p.keep(p.frameCost(), recOff); err != nil {
		return err
	}
	first := p.slotsRoom(recOff)
	for _, o := range p.offs {
		v, err := p.wordAt(cOff + int64(o))
		if err != nil {
			return err
		}
		p.slots = append(p.slots, Slot{Offset: o, Value: v})
	}
	p.appendFrame(f, first)
	return nil
}

// maxStack is the most bytes a goroutine's frames can hold: maxStack64, or
// maxStack32 for a 32-bit dump.
func (p *parser) maxStack() uint64 {
	if p.ptrSize == 4 {
		return maxStack32
	}
	return maxStack64
}

// frameCost is the memory estimate of a frame whose pointer offsets are
// p.offs: the frame, and if a slot points to an object a root node with
// its slots.
func (p *parser) frameCost() int64 {
	cost := int64(unsafe.Sizeof(Frame{})) + 4
	if len(p.offs) > 0 {
		cost += rootCost + int64(len(p.offs))*(int64(unsafe.Sizeof(Slot{}))+rootSlotCost)
	}
	return cost
}

// slotsRoom makes room in p.slots for the slots of the frame whose record
// is at recOff, one a pointer offset in p.offs, and returns where they
// start.
func (p *parser) slotsRoom(recOff int64) uint32 {
	if len(p.d.Frames) == 0 {
		p.framesFrom = recOff
	}
	if len(p.slots)+len(p.offs) > cap(p.slots) {
		p.slots = growFrom(p, p.slots, len(p.offs), p.framesFrom)
	}
	return uint32(len(p.slots))
}

// appendFrame adds f, whose slots are p.slots from first on, to its
// goroutine.
func (p *parser) appendFrame(f Frame, first uint32) {
	f.slotsStart, f.slotsEnd = first, uint32(len(p.slots))
	if f.slotsEnd > f.slotsStart {
		p.d.withSlots++
	}
	if len(p.d.Frames) == cap(p.d.Frames) {
		p.d.Frames = growFrom(p, p.d.Frames, 1, p.framesFrom)
	}
	p.d.Frames = append(p.d.Frames, f)
	p.d.Goroutines[p.curG].NumFrames++
	p.nextDepth++
}

// frameFast reads the frame record at recOff, as frame does, when the
// whole record is in the buffer and nothing in it is amiss: it decodes it
// in place, and changes nothing until it knows it will read it whole. It
// reports false, having read nothing, for frame to read the record and
// name what is wrong, if anything is.
func (p *parser) frameFast(recOff int64) bool {
	r := p.r
	b := r.buf[:r.end]
	sp, i := uvarintAt(b, r.pos)
	depth, i := uvarintAt(b, i)
	childSP, i := uvarintAt(b, i)
	n, i := uvarintAt(b, i)
	if i < 0 || depth != uint64(p.nextDepth) || n > maxBuffered || uint64(len(b)-i) < n {
		return false
	}
	if n > p.maxStack()-p.stackBytes {
		return false
	}
	c := i
	i += int(n)
	entry, i := uvarintAt(b, i)
	pc, i := uvarintAt(b, i)
	contPC, i := uvarintAt(b, i)
	nameLen, i := uvarintAt(b, i)
	if i < 0 || nameLen > maxString || uint64(len(b)-i) < nameLen {
		return false
	}
	name := b[i : i+int(nameLen)]
	i += int(nameLen)
	// The field list, as fieldList reads it: pointer fields in at most two
	// ascending runs.
	p.offs = p.offs[:0]
	runs := 2
	for {
		var kind, o uint64
		if kind, i = uvarintAt(b, i); i < 0 || kind != fieldKindPtr && kind != fieldKindEol {
			return false
		}
		if kind == fieldKindEol {
			break
		}
		if o, i = uvarintAt(b, i); i < 0 {
			return false
		}
		if len(p.offs) > 0 && o <= p.offs[len(p.offs)-1] {
			if runs--; runs < 1 {
				return false
			}
		}
		if o%p.ptrSize != 0 || o >= n || n-o < p.ptrSize || uint64(len(p.offs)) >= 2*(n/p.ptrSize) {
			return false
		}
		p.offs = append(p.offs, o)
	}
	if len(p.slots)+len(p.offs) > maxIndex {
		return false
	}
	cost := p.frameCost()
	if p.total()+cost > p.keptLimit {
		return false
	}
	// Nothing can fail from here on.
	p.kept += cost
	p.stackBytes += n
	f := Frame{Goroutine: p.curG, Depth: p.nextDepth, SP: sp, ChildSP: childSP, Size: n, Entry: entry, PC: pc, ContPC: contPC, contents: r.base + int64(c)}
	f.fn = p.funcIndex(name, f.Depth)
	first := p.slotsRoom(recOff)
	for _, o := range p.offs {
		p.slots = append(p.slots, Slot{Offset: o, Value: p.word(b[c+int(o):])})
	}
	p.appendFrame(f, first)
	r.pos = i
	return true
}

// finishFrames hands the frames' function names and slots to the dump.
func (p *parser) finishFrames() error {
	p.d.funcs = p.funcs
	p.d.slots = p.slots
	return nil
}

func (p *parser) finalizer(tag uint64) error {
	var f Finalizer
	if err := p.ints(&f.Object, &f.Fn, &f.FnPC, &f.ArgType, &f.ObjType); err != nil {
		return err
	}
	if err := p.keep(int64(unsafe.Sizeof(f))+rootCost+2*rootSlotCost, p.recOff); err != nil {
		return err
	}
	if tag == tagFinalizer {
		p.d.Finalizers = appendRecord(p, p.d.Finalizers, f, tagFinalizer)
	} else {
		p.d.QueuedFinalizers = appendRecord(p, p.d.QueuedFinalizers, f, tagQueuedFinalizer)
	}
	return nil
}

func (p *parser) thread() error {
	var t Thread
	if err := p.ints(&t.Addr, &t.ID, &t.ProcID); err != nil {
		return err
	}
	if err := p.keep(int64(unsafe.Sizeof(t)), p.recOff); err != nil {
		return err
	}
	p.d.Threads = appendRecord(p, p.d.Threads, t, tagOSThread)
	return nil
}

func (p *parser) memStats(off int64) error {
	r := p.r
	if p.d.MemStats != nil {
		return r.errorf(off, "second memstats record")
	}
	m := new(runtime.MemStats)
	if err := p.ints(&m.Alloc, &m.TotalAlloc, &m.Sys, &m.Lookups, &m.Mallocs, &m.Frees,
		&m.HeapAlloc, &m.HeapSys, &m.HeapIdle, &m.HeapInuse, &m.HeapReleased, &m.HeapObjects,
		&m.StackInuse, &m.StackSys, &m.MSpanInuse, &m.MSpanSys, &m.MCacheInuse, &m.MCacheSys,
		&m.BuckHashSys, &m.GCSys, &m.OtherSys, &m.NextGC, &m.LastGC, &m.PauseTotalNs); err != nil {
		return err
	}
	for i := range m.PauseNs {
		if err := p.ints(&m.PauseNs[i]); err != nil {
			return err
		}
	}
	nOff := r.off()
	var numGC uint64
	if err := p.ints(&numGC); err != nil {
		return err
	}
	if numGC > math.MaxUint32 {
		return r.errorf(nOff, "GC count %d does not fit in 32 bits", numGC)
	}
	m.NumGC = uint32(numGC)
	p.d.MemStats = m
	return nil
}

// segment reads a data or bss record, keeping its contents.
func (p *parser) segment(tag uint64, recOff int64) error {
	r := p.r
	if err := p.needParams(recOff); err != nil {
		return err
	}
	s := Segment{Kind: SegmentData}
	if tag == tagBSS {
		s.Kind = SegmentBSS
	}
	// The runtime writes the segments of the first module only.
	if p.segSeen[s.Kind-1] {
		return r.errorf(recOff, "second %s segment record", s.Kind)
	}
	p.segSeen[s.Kind-1] = true
	if err := p.ints(&s.Addr); err != nil {
		return err
	}
	n, nOff, err := r.length("segment contents", maxSegment)
	if err != nil {
		return err
	}
	if s.Addr > math.MaxUint64-uint64(n) {
		return r.errorf(nOff, "segment [%#x, +%d) overflows the address space", s.Addr, n)
	}
	// The contents stay in the file; the words in the pointer slots,
	// which become the globals' edges, are read once the field list
	// has said where they are.
	s.Size = uint64(n)
	s.Contents = Contents{src: p.source(), off: r.off(), n: n}
	r.skip(n)
	if err := p.fieldList(uint64(n), 1); err != nil {
		return err
	}
	if err := p.keep(int64(len(p.offs))*(8+8+rootSlotCost+rootCost), recOff); err != nil {
		return err
	}
	s.PtrOffsets = append([]uint64(nil), p.offs...)
	if s.values, err = s.Contents.words(s.PtrOffsets); err != nil {
		return err
	}
	p.d.Segments = appendRecord(p, p.d.Segments, s, tagData) // data and bss records alike
	return nil
}

// source returns the file that the Contents the parser gives read.
func (p *parser) source() *source {
	if p.src == nil {
		p.src = &source{ra: p.r.ra, path: p.r.path, size: p.r.size, words: wordDecoder{size: int64(p.ptrSize), order: p.order}}
	}
	return p.src
}

func (p *parser) deferRecord() error {
	var d Defer
	if err := p.ints(&d.Addr, &d.G, &d.SP, &d.PC, &d.Fn, &d.FnPC, &d.Link); err != nil {
		return err
	}
	if err := p.keep(2*int64(unsafe.Sizeof(d))+rootSlotCost, p.recOff); err != nil {
		return err
	}
	p.d.Defers = appendRecord(p, p.d.Defers, d, tagDefer)
	return nil
}

func (p *parser) panicRecord() error {
	var pr Panic
	var unused uint64
	if err := p.ints(&pr.Addr, &pr.G, &pr.Type, &pr.Data, &unused, &pr.Link); err != nil {
		return err
	}
	if err := p.keep(int64(unsafe.Sizeof(pr))+rootCost+rootSlotCost, p.recOff); err != nil { // a root of its own
		return err
	}
	p.d.Panics = appendRecord(p, p.d.Panics, pr, tagPanic)
	return nil
}

func (p *parser) memProf() error {
	r := p.r
	var b Bucket
	if err := p.ints(&b.Addr, &b.Size); err != nil {
		return err
	}
	nOff := r.off()
	var nstk uint64
	if err := p.ints(&nstk); err != nil {
		return err
	}
	// Each frame takes at least three bytes.
	if nstk > uint64(r.remaining()/3) {
		return r.errorf(nOff, "stack depth %d past end of file", nstk)
	}
	if nstk > maxProfStackDepth {
		return r.errorf(nOff, "stack depth %d is more than the runtime's %d", nstk, maxProfStackDepth)
	}
	if err := p.keep(int64(unsafe.Sizeof(b))+mapEntryCost+int64(nstk)*int64(unsafe.Sizeof(binsym.Position{})), p.recOff); err != nil {
		return err
	}
	// The depth is checked against the bytes left, the runtime's bound and
	// the budget: a new array for the stack takes at most 40 KiB, and the
	// stack leaves no garbage of growing slices.
	if uint64(cap(p.stacks)-len(p.stacks)) < nstk {
		p.stacks = make([]binsym.Position, 0, max(stackChunk, int(nstk)))
	}
	first := len(p.stacks)
	for range nstk {
		var pos binsym.Position
		fn, err := r.bytes("function name")
		if err != nil {
			return err
		}
		pos.Function = p.intern(fn)
		file, err := r.bytes("file name")
		if err != nil {
			return err
		}
		pos.File = p.intern(file)
		lineOff := r.off()
		var line uint64
		if err := p.ints(&line); err != nil {
			return err
		}
		if line > math.MaxInt32 {
			return r.errorf(lineOff, "line %d out of range", line)
		}
		pos.Line = int(line)
		p.stacks = append(p.stacks, pos) // within its capacity
	}
	b.Stack = p.stacks[first:len(p.stacks):len(p.stacks)]
	if err := p.ints(&b.Allocs, &b.Frees); err != nil {
		return err
	}
	p.d.Buckets = appendRecord(p, p.d.Buckets, b, tagMemProf)
	return nil
}

// stackChunk is the number of positions of the arrays the buckets'
// stacks are cut from.
const stackChunk = 4096

func (p *parser) allocSample() error {
	var s sample
	if err := p.ints(&s.obj, &s.bucket); err != nil {
		return err
	}
	if err := p.keep(int64(unsafe.Sizeof(s))+int64(unsafe.Sizeof(allocSample{})), p.recOff); err != nil {
		return err
	}
	p.samples = appendRecord(p, p.samples, s, tagAllocSample)
	return nil
}
