package heap

import (
	"fmt"
	"slices"

	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
)

// One mechanism can hold through several roots: a loop that defers the
// cancel of a WithTimeout context each time round leaves, for each
// context, a pending defer record (the frame's), the context the defer's
// closure and the context's timer share (a shared holding) and the timer
// with its closure (the runtime's timer heap). Keyed by holder, they are
// three groups, each with a part of the bytes. A defer record's holding
// or a timer's holding that points, within a few steps, to a shared
// holding is keyed with that holding's key too (holdKey.mechSig and
// mechSlot), and joinMechanisms folds the defers and the timers into the
// group of the shared holdings when both are there: one group, one total.

// maxMechSteps and maxMechNodes bound the search of mechanismKey from a
// holding's top to a shared holding: a closure and the context it holds.
const (
	maxMechSteps = 3
	maxMechNodes = 16
)

// Mechanism says that a group is one mechanism held by several roots, and
// what each part counts: a shared group of contexts, each with the pending
// defer that will cancel it and the timer that will.
type Mechanism struct {
	// Kind is MechDeferTimer.
	Kind string `json:"kind"`
	// Function and Goroutine are the frame whose defers are pending: the
	// function that deferred them, and its goroutine when there is one.
	Function  string `json:"function"`
	Goroutine uint64 `json:"goroutine_id,omitempty"`
	// Defers and Timers count the defer records and timers folded into the
	// group, DeferBytes and TimerBytes what they retain beyond the shared
	// objects (the timers' own objects included); SharedBytes is what the
	// shared objects retain. The three add up to the group's
	// RetainedBytes, which counts no byte twice: each part is what its
	// holders alone keep alive, and a timer's own object is not in the
	// shared objects' retained sets.
	Defers      int    `json:"defer_count"`
	Timers      int    `json:"timer_count"`
	DeferBytes  uint64 `json:"defer_retained_bytes"`
	TimerBytes  uint64 `json:"timer_retained_bytes"`
	SharedBytes uint64 `json:"shared_retained_bytes"`
}

// MechDeferTimer is the Kind of a Mechanism of pending defers, each of
// which will cancel a context that a timer holds too (a defer cancel() in
// a loop that never returns).
const MechDeferTimer = "pending defer cancel() with its timer"

// mechanismKey returns key, the key of holding v, with the key of the
// shared holding it points to within maxMechSteps steps inside itself,
// when it is the holding of a defer record or of a timer.
func (a *Analysis) mechanismKey(v heapdump.NodeID, key holdKey) holdKey {
	isDefer := key.kind == 'r' && (key.field == uint32(heapdump.FieldRecord) || key.field == uint32(heapdump.FieldDefer))
	if !isDefer && key.kind != 'T' {
		return key
	}
	level := []heapdump.NodeID{v}
	seen := 1
	for range maxMechSteps {
		var next []heapdump.NodeID
		for _, u := range level {
			for _, w := range a.g.Succ(u) {
				if !a.g.IsObject(w) {
					continue
				}
				if set, slot, user := a.sharedKey(w); user {
					key.mechSig, key.mechSlot = set, slot
					return key
				}
				if a.topOf(w) == v && seen < maxMechNodes {
					seen++
					next = append(next, w)
				}
			}
		}
		level = next
	}
	return key
}

// joinMechanisms folds, into the group of each shared holding, the groups
// of defer records and of timers keyed with it (mechanismKey) when there
// are both, and returns the groups left (see unmarkMechanisms).
func (a *Analysis) joinMechanisms(out []*pending) []*pending {
	type parts struct{ defers, timers []*pending }
	byBase := map[holdKey]*parts{}
	for _, p := range out {
		if p.key.mechSig == 0 || p.large {
			continue
		}
		base := holdKey{kind: 's', sig: p.key.mechSig, slot: p.key.mechSlot}
		pt := byBase[base]
		if pt == nil {
			pt = &parts{}
			byBase[base] = pt
		}
		if p.key.kind == 'T' {
			pt.timers = append(pt.timers, p)
		} else {
			pt.defers = append(pt.defers, p)
		}
	}
	if len(byBase) == 0 {
		return out
	}
	folded := map[*pending]bool{}
	for _, b := range out {
		pt := byBase[b.key]
		if pt == nil || len(pt.defers) == 0 || len(pt.timers) == 0 {
			continue
		}
		h := a.holder(a.Idom(pt.defers[0].rep))
		m := &Mechanism{Kind: MechDeferTimer, Function: h.Function, Goroutine: h.Goroutine, SharedBytes: b.retained}
		for _, q := range slices.Concat(pt.defers, pt.timers) {
			if q.key.kind == 'T' {
				// The timers themselves, which hold their holdings.
				own := q.timerOwn / uint64(q.count)
				q.retained += q.timerOwn
				q.bytes += q.timerOwn
				q.objects += uint64(q.count)
				q.minEach += own
				q.maxEach += own
				m.Timers += q.count
				m.TimerBytes += q.retained
			} else {
				m.Defers += q.count
				m.DeferBytes += q.retained
			}
			// Each member is now a context with its defer and its timer:
			// the least and the most one retains are bounded by the sums.
			b.bytes += q.bytes
			b.retained += q.retained
			b.objects += q.objects
			b.minEach += q.minEach
			b.maxEach += q.maxEach
			b.goroutines = append(b.goroutines, q.goroutines...)
			folded[q] = true
			q.into = b
			if a.recordMembers {
				b.members = append(b.members, a.mechanismMembers(q)...)
			}
		}
		b.mech = m
	}
	return a.unmarkMechanisms(out, folded)
}

// unmarkMechanisms drops the groups folded into others from out, and
// gives the groups keyed with a shared holding's key but not folded
// (defers with no timers, as under a long-lived parent) their keys back,
// each joining the group of its key when there is one: they are grouped
// as they were before mechanismKey.
func (a *Analysis) unmarkMechanisms(out []*pending, folded map[*pending]bool) []*pending {
	byKey := map[holdKey]*pending{}
	for _, p := range out {
		if p.key.mechSig == 0 {
			byKey[p.key] = p
		}
	}
	for _, p := range out {
		if p.key.mechSig == 0 || folded[p] {
			continue
		}
		k := p.key
		k.mechSig, k.mechSlot = 0, 0
		q := byKey[k]
		if q == nil {
			p.key, p.timerOwn = k, 0
			byKey[k] = p
			continue
		}
		if p.rep < q.rep {
			q.rep = p.rep
		}
		q.count += p.count
		q.bytes += p.bytes
		q.retained += p.retained
		q.leakedBytes += p.leakedBytes
		q.objects += p.objects
		q.minEach, q.maxEach = min(q.minEach, p.minEach), max(q.maxEach, p.maxEach)
		q.goroutines = append(q.goroutines, p.goroutines...)
		q.members = append(q.members, p.members...)
		p.into = q
		folded[p] = true
	}
	return slices.DeleteFunc(out, func(p *pending) bool { return folded[p] })
}

// who names the holders of mechanism group g in its headline: "5,000
// pending defer cancel() in main.parse (goroutine 8), each with its
// timer,".
func (m *Mechanism) who(g *Group) string {
	who := fmt.Sprintf("%s pending defer cancel() in %s", thousands(m.Defers), m.Function)
	switch n := g.goroutineCount(); {
	case n > 1:
		who += " of " + goroutines(g.Goroutines, n)
	case m.Goroutine != 0:
		who += fmt.Sprintf(" (goroutine %d)", m.Goroutine)
	}
	return who + ", each with its timer,"
}

// parts says what each part of mechanism group g retains: "the defer
// records retain 312.5 KiB, the timers 156.2 KiB, the contexts they
// share 546.9 KiB".
func (m *Mechanism) parts(g *Group) string {
	what := g.Object.Type
	if what == "" {
		what = "objects"
	}
	return fmt.Sprintf("%s defer records retain %s, %s timers %s, the %s %s they share %s",
		thousands(m.Defers), bytesize.Format(int64(m.DeferBytes)), thousands(m.Timers), bytesize.Format(int64(m.TimerBytes)),
		thousands(g.Count), english.Noun(g.Count, what), bytesize.Format(int64(m.SharedBytes)))
}

// mechanismMembers returns the members group q brings to its mechanism's
// group: a timers' group brings the timers themselves, whose own bytes
// the mechanism counts, rather than the holdings under them.
func (a *Analysis) mechanismMembers(q *pending) []heapdump.NodeID {
	if q.key.kind != 'T' {
		return q.members
	}
	var ts []heapdump.NodeID
	for _, m := range q.members {
		if t := a.Idom(m); len(ts) == 0 || ts[len(ts)-1] != t {
			ts = append(ts, t)
		}
	}
	return ts
}
