// Package recent keeps the last answers to a question asked again and
// again of a few keys, such as a property of the functions of 600,000
// frames of a dozen functions, in front of a map or a slower lookup: each
// key has one of Slots places, chosen by a hash of it, and a key that
// takes a place drops the one that had it.
package recent

// Slots is the number of places of a Cache.
const Slots = 64

// Cache keeps a value for each of Slots keys at most. Its zero value is
// empty and ready to use.
type Cache[K comparable, V any] struct {
	keys   [Slots]K
	values [Slots]V
	set    [Slots]bool
}

// Hash mixes x into a hash for Get and Put: the place is taken from its
// top bits.
func Hash(x uint64) uint64 { return x * 0x9e3779b97f4a7c15 }

// slot is the place of hash h.
func slot(h uint64) int { return int(h >> 58) } // log2(Slots) top bits

// Get returns the value kept for key k, whose hash is h, if it is kept.
func (c *Cache[K, V]) Get(h uint64, k K) (V, bool) {
	i := slot(h)
	if c.set[i] && c.keys[i] == k {
		return c.values[i], true
	}
	var zero V
	return zero, false
}

// Put keeps v for key k, whose hash is h, in place of what had its place.
func (c *Cache[K, V]) Put(h uint64, k K, v V) {
	i := slot(h)
	c.keys[i], c.values[i], c.set[i] = k, v, true
}
