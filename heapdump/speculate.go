package heapdump

import (
	"runtime/debug"
	"sync/atomic"
)

// The object records fill most of a big dump, and reading them is the one
// part of the parse that only one core did. So the parser that reads the
// file from its start hands the second half of the file to a second
// parser on the other core (speculate). That one starts at a record
// boundary it finds by looking for a run of object records, and reads
// object records up to the first record of another kind. The first, on
// reaching that boundary, takes what the second read and skips over it
// (adopt).
//
// The result is the one a single parser gets, whatever the timing: a
// boundary the first parser does not land on exactly was a false one, and
// any failure of the second (a bad record, its share of the budget) is
// dropped too, so the first reads on by itself and meets the error itself.
// For the groups of the object index to come out the same, in any parser
// the first record at or past every multiple of cutEvery bytes of the file
// starts a new group, and the second parser starts at such a record.

// Defaults of the parser's settings (tests change them): speculateMin is
// the file size from which the objects are read on two cores, speculateAt
// where in the rest of the file after the first object the second parser
// starts, and cutEvery the spacing of the file offsets at which object
// groups are cut (see above): 1 MiB costs a group, about a hundred bytes,
// per MiB.
const (
	speculateMin = 64 << 20
	speculateAt  = 0.5
	cutEvery     = 1 << 20
)

// syncRecords is the number of object records in a row that make a
// boundary (a parser's default; tests lower it); they may reach syncSpan
// bytes past the cutEvery bytes searched.
const (
	syncRecords = 16
	syncSpan    = 1 << 20
)

// speculation is the second parser's part of the file.
type speculation struct {
	start  int64 // file offset of its first record
	end    int64 // file offset of the first record it did not read
	ok     bool  // it stopped at a record of another kind, not a failure
	q      *parser
	done   chan struct{}
	cancel atomic.Bool
}

// speculate starts a second parser on the second part of the object
// records, if the file is big enough and a boundary is found there. off is
// the file offset of the first object record.
func (p *parser) speculate(off int64) {
	p.speculated = true
	r := p.r
	if r.size < p.specMin || !p.compact || !p.le64 {
		return
	}
	at := off + int64(float64(r.size-off)*p.specAt)
	start, ok := p.syncObjects((at + p.cutEvery - 1) / p.cutEvery * p.cutEvery)
	if !ok {
		return
	}
	q := &parser{
		r:          newReaderFrom(r.ra, r.size, r.path, start),
		d:          &Dump{},
		haveParams: true,
		ptrSize:    p.ptrSize,
		le64:       p.le64,
		order:      p.order,
		arenaLo:    p.arenaLo,
		arenaLen:   p.arenaLen,
		shift:      p.shift,
		compact:    p.compact,
		curG:       -1,
		wOff:       -1,
		perNode:    p.perNode,
		perEdge:    p.perEdge,
		origin:     start,
		cutEvery:   p.cutEvery,
		nextCut:    start / p.cutEvery * p.cutEvery,
		// Half of what is left: the two parsers' arrays exist together
		// until the first takes the second's.
		keptLimit: (p.keptLimit - p.total()) / 2,
	}
	q.idx.noGaps = p.idx.noGaps
	s := &speculation{start: start, q: q, done: make(chan struct{})}
	p.spec = s
	go s.run()
}

// syncObjects returns the file offset of the first record boundary in the
// cutEvery bytes from c on that p.syncRecords object records follow, each
// of which objectsFast would read.
func (p *parser) syncObjects(c int64) (int64, bool) {
	r := p.r
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

// run reads object records until a record of another kind, a failure or
// a cancel.
func (s *speculation) run() {
	defer close(s.done)
	q := s.q
	r := q.r
	defer r.close()
	if r.mapped {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		var err error
		defer r.recoverFault(&err) // a failure, as any other
	}
	for !s.cancel.Load() {
		off := r.off()
		r.dropBehind()
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

// adopt is called at the first record boundary off at or past the second
// parser's start. At its start, it takes what the second parser read,
// moves the reader past it and reports true; anywhere else, or when the
// second parser failed, or the two together pass a limit, it drops that
// work and reports false.
func (p *parser) adopt(off int64) bool {
	s := p.spec
	p.spec = nil
	// Landing on the start is not enough: a record of this parser's
	// between the multiple of cutEvery before it and it would have cut
	// the groups there.
	mine := off == s.start && p.nextCut <= off
	if !mine {
		s.cancel.Store(true)
	}
	<-s.done
	q := s.q
	if !mine || !s.ok ||
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
		x.groups = append(x.groups, g)
	}
	x.marks = append(x.marks, y.marks...)
	x.bits = append(x.bits, y.bits...)
	x.n += y.n
	x.gapped = x.gapped || y.gapped
	x.sealed = y.sealed
	objects := uint32(len(p.counts))
	p.counts = appendGrown(p, p.counts, q.counts)
	for _, b := range q.big {
		b.obj += objects
		p.big = append(p.big, b)
	}
	p.edges32 = appendGrown(p, p.edges32, q.edges32)
	p.kept += q.kept
	p.groups = len(x.groups)
	p.nextCut = q.nextCut
	p.adopted++
	p.r.skip(s.end - off)
	return true
}

// dropSpeculation stops the second parser, if any, and waits for it.
func (p *parser) dropSpeculation() {
	if s := p.spec; s != nil {
		p.spec = nil
		s.cancel.Store(true)
		<-s.done
	}
}

// specStart returns the file offset objectsFast stops before: the second
// parser's start while it runs.
func (p *parser) specStart() int64 {
	if p.spec == nil {
		return 1<<63 - 1
	}
	return p.spec.start
}

// cutGroups starts a new object group at the record at off if it is the
// first at or past a multiple of cutEvery (see above).
func (p *parser) cutGroups(off int64) {
	if off >= p.nextCut {
		p.idx.sealed = true
		p.nextCut = (off/p.cutEvery + 1) * p.cutEvery
	}
}

// appendGrown appends t to s, growing s as the parser grows its arrays.
func appendGrown[T any](p *parser, s, t []T) []T {
	if cap(s)-len(s) < len(t) {
		s = grow(p, s, len(t))
	}
	return append(s, t...)
}
