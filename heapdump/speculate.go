package heapdump

import (
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/ctxleak/ctxleak/internal/bigarray"
)

// The object records fill most of a big dump, and reading them is the one
// part of the parse that only one core did. So the parser that reads the
// file from its start hands parts of the file to a helper on the other
// core, each read by a parser of its own (a speculation). The first part
// starts halfway through the file and ends at the first record that is
// not an object. When the helper is done with a part and the main parser
// is still far from it, the helper takes the second half of what lies
// between them, up to the part's start; and so on. A part starts at a
// record boundary the helper finds by looking for a run of object records.
// The main parser, on reaching a part's start, takes what the part's
// parser read and skips over it (adopt).
//
// The result is the one a single parser gets, whatever the timing: a
// boundary the main parser does not land on exactly was a false one, and
// any failure of a part's parser (a bad record, its share of the budget,
// a part that does not end where the next starts) drops its work, so the
// main parser reads on by itself and meets any error itself. For the
// groups of the object index to come out the same, in any parser the
// first record at or past every multiple of cutEvery bytes of the file
// starts a new group, and a part starts at such a record.

// Defaults of the parser's settings (tests change them): speculateMin is
// the file size from which the objects are read on two cores, speculateAt
// where in the rest of the file after the first object the first part
// starts (tests give several), stealMin the distance between the main parser and a part from
// which the helper takes half of it, and cutEvery the spacing of the file
// offsets at which object groups are cut (see above): 1 MiB costs a
// group, about a hundred bytes, per MiB.
const (
	speculateMin = 64 << 20
	speculateAt  = 0.5
	stealMin     = 32 << 20
	cutEvery     = 1 << 20
)

// syncRecords is the number of object records in a row that make a
// boundary (a parser's default; tests lower it); they may reach syncSpan
// bytes past the cutEvery bytes searched.
const (
	syncRecords = 16
	syncSpan    = 1 << 20
)

// speculation is a part of the file read by a parser of its own.
type speculation struct {
	start  int64 // file offset of its first record
	stop   int64 // the next part's start, or math.MaxInt64
	end    int64 // file offset of the first record it did not read
	ok     bool  // it ended at or past stop, or at a record of another kind
	q      *parser
	done   chan struct{}
	cancel atomic.Bool
}

// helping is the main parser's side of the parts: those not yet adopted
// or dropped, by start, and what the helper needs to know.
type helping struct {
	mu     sync.Mutex
	parts  []*speculation
	closed bool           // the main parser is done: no more parts
	next   atomic.Int64   // start of parts[0], or math.MaxInt64
	at     atomic.Int64   // the main parser's offset
	budget int64          // memory estimate the parts may take together
	spent  int64          // what the helper's parts took
	made   int            // parts made, for tests
	exited sync.WaitGroup // the helper
}

// speculate starts the helper on the first parts (one, from halfway
// through the rest of the file, but in tests), if the file is big enough
// and boundaries are found there. off is the file offset of the first
// object record.
func (p *parser) speculate(off int64) {
	p.speculated = true
	r := p.r
	if r.size < p.specMin || !p.compact || !p.le64 {
		return
	}
	var starts []int64
	for _, f := range p.specAt {
		at := off + int64(float64(r.size-off)*f)
		start, ok := p.syncObjects(at)
		if ok && (len(starts) == 0 || start > starts[len(starts)-1]) {
			starts = append(starts, start)
		}
	}
	if len(starts) == 0 {
		return
	}
	h := &p.help
	// Half of what is left: the parts' arrays and the main parser's
	// exist together until the main parser takes them.
	h.budget = (p.keptLimit - p.total()) / 2
	for i, start := range starts {
		stop := int64(math.MaxInt64)
		if i+1 < len(starts) {
			stop = starts[i+1]
		}
		h.parts = append(h.parts, p.part(start, stop))
	}
	parts := h.parts
	h.next.Store(starts[0])
	h.exited.Add(1)
	go func() {
		defer h.exited.Done()
		for _, s := range parts {
			s.run()
			p.spend(s)
		}
		for s := p.steal(); s != nil; s = p.steal() {
			s.run()
			p.spend(s)
		}
	}()
}

// spend counts the memory estimate of part s, done, against the parts'
// budget.
func (p *parser) spend(s *speculation) {
	p.help.mu.Lock()
	p.help.spent += s.q.total()
	p.help.mu.Unlock()
}

// part returns the speculation for the records from start, up to stop.
func (p *parser) part(start, stop int64) *speculation {
	r := p.r
	q := &parser{
		r:           newMappedReader(r.ra, r.size, r.path, start),
		d:           &Dump{},
		haveParams:  true,
		ptrSize:     p.ptrSize,
		le64:        p.le64,
		order:       p.order,
		arenaLo:     p.arenaLo,
		arenaLen:    p.arenaLen,
		shift:       p.shift,
		compact:     p.compact,
		curG:        -1,
		wOff:        -1,
		perNode:     p.perNode,
		perEdge:     p.perEdge,
		origin:      start,
		cutEvery:    p.cutEvery,
		nextCut:     start / p.cutEvery * p.cutEvery,
		stopAt:      stop,
		keptLimit:   p.help.budget - p.help.spent,
		syncRecords: p.syncRecords,
	}
	q.help.next.Store(math.MaxInt64)
	q.idx.noGaps = p.idx.noGaps
	q.r.progress, q.r.counted = r.progress, start
	p.help.made++
	return &speculation{start: start, stop: stop, q: q, done: make(chan struct{})}
}

// steal is called by the helper once done with its parts. When the main
// parser is stealMin bytes or more before the first part, it returns a new
// part from halfway there up to that part's start, else nil.
func (p *parser) steal() *speculation {
	h := &p.help
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.parts) == 0 {
		return nil
	}
	first := h.parts[0]
	at := h.at.Load()
	if first.start-at < p.stealMin {
		return nil
	}
	mid := at + (first.start-at)/2
	start, ok := p.syncObjects(mid)
	if !ok || start >= first.start || h.budget-h.spent <= 0 {
		return nil
	}
	n := p.part(start, first.start)
	h.parts = append([]*speculation{n}, h.parts...)
	h.next.Store(start)
	return n
}

// syncObjects returns the file offset of the first record boundary in the
// cutEvery bytes from the first multiple of cutEvery at or past at, that
// p.syncRecords object records follow, each of which objectsFast would
// read.
func (p *parser) syncObjects(at int64) (int64, bool) {
	r := p.r
	c := (at + p.cutEvery - 1) / p.cutEvery * p.cutEvery
	n := min(p.cutEvery+syncSpan, r.size-c)
	if n <= 0 {
		return 0, false
	}
	buf := make([]byte, n)
	if m, _ := r.ra.ReadAt(buf, c); int64(m) != n {
		return 0, false
	}
	for i := range min(p.cutEvery, n) {
		if buf[i] == tagObject && p.objectRun(buf, int(i), p.syncRecords) {
			return c + i, true
		}
	}
	return 0, false
}

// objectRun reports whether buf holds k object records from i on, each
// as objectsFast checks it: an aligned address and size inside the heap
// arenas, and a field list of ascending aligned offsets inside the
// contents.
func (p *parser) objectRun(buf []byte, i, k int) bool {
	lo, span := p.arenaLo, p.arenaLen
	for range k {
		if i >= len(buf) || buf[i] != tagObject {
			return false
		}
		addr, j := uvarintAt(buf, i+1)
		n, j := uvarintAt(buf, j)
		if j < 0 || n == 0 || n > maxBuffered || n%8 != 0 || addr%8 != 0 ||
			addr < lo || n > span || addr-lo > span-n || uint64(len(buf)-j) < n {
			return false
		}
		j += int(n)
		prev := int64(-1)
		for {
			if j >= len(buf) {
				return false
			}
			if buf[j] == fieldKindEol {
				j++
				break
			}
			if buf[j] != fieldKindPtr {
				return false
			}
			var o uint64
			if o, j = uvarintAt(buf, j+1); j < 0 || o%8 != 0 || o >= n || int64(o) <= prev {
				return false
			}
			prev = int64(o)
		}
		i = j
	}
	return true
}

// run reads the part's object records, until its stop, a record of
// another kind, a failure or a cancel.
func (s *speculation) run() {
	defer close(s.done)
	q := s.q
	r := q.r
	defer r.release()
	defer r.countRead(true)
	if r.m != nil {
		defer r.guardMapped(nil, debug.SetPanicOnFault(true)) // a fault drops the part
	}
	for !s.cancel.Load() {
		off := r.off()
		if off >= s.stop {
			// At the next part's start, or past it if that was no
			// boundary: either way what was read is right.
			s.end, s.ok = off, true
			return
		}
		r.countRead(false)
		if r.remaining() == 0 || r.fill(1, off) != nil {
			return
		}
		if r.buf[r.pos] != tagObject {
			s.end, s.ok = off, true
			return
		}
		q.cutGroups(off)
		if !q.objectsFast() {
			r.pos++
			if q.object(off) != nil {
				return
			}
		}
		if q.keepGroups(off) != nil {
			return
		}
	}
}

// adopt is called at a record boundary off at or past the first part's
// start. It drops the parts that start before off. If the next starts at
// off, it takes what the part's parser read, moves the reader past it and
// reports true, unless the part failed, or the two together pass a limit:
// then it drops that part too.
func (p *parser) adopt(off int64) bool {
	h := &p.help
	h.mu.Lock()
	var s *speculation
	for len(h.parts) > 0 && h.parts[0].start <= off {
		if h.parts[0].start == off {
			s = h.parts[0]
			// Where this parser will be once it has taken the part:
			// nothing before is left for the helper to take.
			h.at.Store(s.stop)
		} else {
			h.parts[0].cancel.Store(true) // the helper drops it
		}
		h.parts = h.parts[1:]
	}
	next := int64(math.MaxInt64)
	if len(h.parts) > 0 {
		next = h.parts[0].start
	}
	h.next.Store(next)
	h.mu.Unlock()
	if s == nil {
		return false
	}
	<-s.done
	q := s.q
	// Landing on the start is not enough: a record of this parser's
	// between the multiple of cutEvery before it and it would have cut
	// the groups there.
	if p.nextCut > off || !s.ok ||
		uint64(p.idx.n)+uint64(q.idx.n) > maxIndex ||
		uint64(len(p.edges32))+uint64(len(q.edges32)) > maxIndex ||
		p.total()+q.total() > p.keptLimit {
		return false
	}
	x, y := &p.idx, &q.idx
	n, marks, words := x.n, uint32(len(x.marks)), int32(len(x.bits))
	for _, g := range y.groups {
		g.first += n
		g.marks += marks
		if g.words >= 0 {
			g.words += words
		}
		x.groups = bigarray.Append(x.groups, g)
	}
	x.marks = bigarray.Append(x.marks, y.marks...)
	x.bits = bigarray.Append(x.bits, y.bits...)
	x.n += y.n
	x.gapped = x.gapped || y.gapped
	x.sealed = y.sealed
	objects := uint32(len(p.counts))
	p.counts = appendGrown(p, p.counts, q.counts, s.end)
	for _, b := range q.big {
		b.obj += objects
		p.big = append(p.big, b)
	}
	p.edges32 = appendGrown(p, p.edges32, q.edges32, s.end)
	p.kept += q.kept
	p.groups = len(x.groups)
	p.nextCut = q.nextCut
	p.adopted++
	if s.end > off {
		// As reading the part's object records would: no frame record
		// that follows them belongs to the goroutine before them.
		p.curG = -1
	}
	p.r.countRead(true)
	p.r.skip(s.end - off)
	p.r.counted = s.end // the part's reader counted those
	return true
}

// stopHelping drops the parts left and waits for the helper to exit.
func (p *parser) stopHelping() {
	h := &p.help
	if !p.speculated {
		return
	}
	h.mu.Lock()
	h.closed = true
	parts := h.parts
	h.parts = nil
	h.next.Store(math.MaxInt64)
	h.mu.Unlock()
	for _, s := range parts {
		s.cancel.Store(true)
	}
	h.exited.Wait()
}

// specStart returns the file offset objectsFast stops before: the next
// part's start, or this part's stop.
func (p *parser) specStart() int64 { return min(p.stopAt, p.help.next.Load()) }

// cutGroups starts a new object group at the record at off if it is the
// first at or past a multiple of cutEvery (see above).
func (p *parser) cutGroups(off int64) {
	if off >= p.nextCut {
		p.idx.sealed = true
		p.nextCut = (off/p.cutEvery + 1) * p.cutEvery
	}
}

// appendGrown appends t, the records of a part that ends at file offset
// end, to s. When s must grow, its new room is extrapolated as grow does,
// but from where the parser will be once past the part, counting the
// part's records. The copies run on every core: the helper that read the
// last part idles while it is adopted.
func appendGrown[T any](p *parser, s, t []T, end int64) []T {
	n := len(s)
	cores := runtime.GOMAXPROCS(0)
	if cap(s)-n < len(t) {
		u := make([]T, n, newRoom[T](p, n+len(t), cap(s), len(t), p.origin, end))
		bigarray.CopyOnCores(u, s, cores)
		s = u
	}
	s = s[:n+len(t)]
	bigarray.CopyOnCores(s[n:], t, cores)
	return s
}
