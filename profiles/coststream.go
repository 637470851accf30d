package profiles

import (
	"sync"
	"sync/atomic"
)

// costStream runs protoCost's walk over a profile.proto message while the
// message is decompressed, on another goroutine, so that the walk takes
// no wall time of its own. The reader (readLimited) hands it each piece
// it reads into (begin), the bytes read so far (grew) and the end (end).
//
// The walk takes the top-level fields that lie whole in what has been
// read, joining the start of a field cut at a piece's end with the next
// piece's first bytes. It gives up at anything else: a field of more than
// carryMax bytes cut between pieces, a field that is not well-formed, a
// cost past its limit. checkDecodeCost then walks the message itself, so
// that the result is always protoCost's.
type costStream struct {
	limit int64 // the walk gives up past this cost

	mu     sync.Mutex
	more   sync.Cond // signalled when a piece begins or grows, or the reading ends
	pieces [][]byte  // the pieces begun; all but the last cut to what was read
	filled int       // bytes read into the last piece
	ended  bool
	quit   atomic.Bool   // the reading failed: the walk is of no use
	walked chan struct{} // closed when the walk has ended

	// The walk's result, read once walked is closed.
	cost  int64
	whole bool // every byte was walked, each field well-formed, the cost within limit
}

// carryMax is the most bytes of a field cut between two pieces that the
// walk joins: profile.proto's top-level fields are samples, locations,
// functions and strings of a few dozen bytes each.
const carryMax = 64 << 10

// startCostStream starts the walk, which gives up once the cost is over
// limit; the reader must call end, whatever happens.
func startCostStream(limit int64) *costStream {
	s := &costStream{limit: limit, walked: make(chan struct{})}
	s.more.L = &s.mu
	go s.walk()
	return s
}

// begin tells the walk that the reader reads into buf next.
func (s *costStream) begin(buf []byte) {
	s.mu.Lock()
	s.cutLast()
	s.pieces = append(s.pieces, buf)
	s.filled = 0
	s.mu.Unlock()
	s.more.Signal()
}

// grew tells the walk that the first n bytes of the last piece are read.
func (s *costStream) grew(n int) {
	s.mu.Lock()
	s.filled = n
	s.mu.Unlock()
	s.more.Signal()
}

// end tells the walk that reading is over: every piece is whole when ok,
// and when not, the walk is of no use and stops.
func (s *costStream) end(ok bool) {
	s.quit.Store(!ok)
	s.mu.Lock()
	s.cutLast()
	s.ended = true
	s.mu.Unlock()
	s.more.Signal()
}

func (s *costStream) cutLast() {
	if k := len(s.pieces) - 1; k >= 0 {
		s.pieces[k] = s.pieces[k][:s.filled]
	}
}

// wait returns piece i, once more than have of its bytes are read or no
// more will be: then whole is set. ok is false when the reading ended
// without a piece i.
func (s *costStream) wait(i, have int) (piece []byte, whole, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch last := len(s.pieces) - 1; {
		case i < last:
			return s.pieces[i], true, true
		case i == last && (s.ended || s.filled > have):
			return s.pieces[i][:s.filled], s.ended, true
		case i > last && s.ended:
			return nil, false, false
		}
		s.more.Wait()
	}
}

// result waits for the walk to end and returns its cost, and
// whether it walked the whole message well-formed within its limit; a nil
// stream walked nothing.
func (s *costStream) result() (int64, bool) {
	if s == nil {
		return 0, false
	}
	<-s.walked
	return s.cost, s.whole
}

// walk walks the message piece by piece; see costStream.
func (s *costStream) walk() {
	defer close(s.walked)
	var carry []byte // the start of a field cut at the last piece's end
	for i := 0; ; i++ {
		piece, whole, ok := s.wait(i, 0)
		if !ok {
			s.whole = len(carry) == 0 && !s.quit.Load()
			return
		}
		pos := 0
		if len(carry) > 0 {
			// The field's rest is in this piece's first bytes, if the
			// field is short enough to be carried.
			for !whole && len(piece) < carryMax {
				piece, whole, _ = s.wait(i, len(piece))
			}
			joined := append(carry, piece[:min(len(piece), carryMax)]...)
			f, rest, err := readField(joined)
			if err != nil || !s.add(f) {
				return
			}
			pos = len(joined) - len(rest) - len(carry)
			carry = carry[:0]
		}
		for {
			if s.quit.Load() {
				return
			}
			f, rest, err := readField(piece[pos:])
			if err == nil {
				if !s.add(f) {
					return
				}
				pos = len(piece) - len(rest)
				continue
			}
			if !whole {
				piece, whole, _ = s.wait(i, len(piece))
				continue
			}
			// The piece's last field is cut at its end, or not well-formed.
			if len(piece)-pos > carryMax {
				return
			}
			carry = append(carry, piece[pos:]...)
			break
		}
	}
}

// add adds the cost of top-level field f, and reports whether the walk
// goes on: f is well-formed, and the cost within limit.
func (s *costStream) add(f field) bool {
	if !validNum(f) { // as nextField
		return false
	}
	c, ok := fieldCost(f)
	s.cost += c
	return ok && s.cost <= s.limit
}
