package heapdump

// recentEntries keeps what was last asked of the functions at a few
// entries, each in one of recentSlots places chosen by the entry's hash,
// in front of a map: 600,000 frames of a dozen functions then hash no
// map key (addRoots asks every frame's argument size and stack objects).
type recentEntries[T any] struct {
	entries [recentSlots]uint64
	values  [recentSlots]T
	set     [recentSlots]bool
}

// recentSlots is the number of places of a recentEntries.
const recentSlots = 64

func recentSlot(entry uint64) int { return int((entry * 0x9e3779b97f4a7c15) >> 58) }

// get returns the value kept for entry, if it is.
func (c *recentEntries[T]) get(entry uint64) (T, bool) {
	i := recentSlot(entry)
	if c.set[i] && c.entries[i] == entry {
		return c.values[i], true
	}
	var zero T
	return zero, false
}

// put keeps v for entry, in place of what had its place.
func (c *recentEntries[T]) put(entry uint64, v T) {
	i := recentSlot(entry)
	c.entries[i], c.values[i], c.set[i] = entry, v, true
}
