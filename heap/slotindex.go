package heap

import (
	"slices"

	"github.com/ctxleak/ctxleak/heapdump"
)

// manySlots is the number of slots from which a root's slots are indexed
// by target rather than searched: a frame with 60,000 pending defers, a
// global array of pointers.
const manySlots = 32

// slotOf returns the index in the slots of root node r of the first slot
// that points into object t, or -1. Roots with many slots are indexed on
// first use, so that finding the slot of each of their holdings stays
// linear in the slots.
func (a *Analysis) slotOf(r, t heapdump.NodeID) int {
	succ := a.g.Succ(r)
	if len(succ) < manySlots {
		return slices.Index(succ, t)
	}
	if a.slotIndex == nil {
		a.slotIndex = map[heapdump.NodeID]map[heapdump.NodeID]int{}
	}
	idx, ok := a.slotIndex[r]
	if !ok {
		idx = make(map[heapdump.NodeID]int, len(succ))
		for k, v := range succ {
			if _, dup := idx[v]; !dup {
				idx[v] = k
			}
		}
		a.slotIndex[r] = idx
	}
	if k, ok := idx[t]; ok {
		return k
	}
	return -1
}
