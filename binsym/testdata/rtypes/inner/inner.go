// Package innerpkg is a package whose name differs from the last element of
// its import path, for testdata/rtypes.
package innerpkg

// Item is a named struct type of another package.
type Item struct {
	ID   int
	tags []string
}

// Key is a named string type.
type Key string

// Iface is a named interface with an unexported method.
type Iface interface {
	Get(Key) (*Item, error)
	reset()
}

// Impl implements Iface.
type Impl struct{ items map[Key]*Item }

// Get returns the item for k.
func (m *Impl) Get(k Key) (*Item, error) { return m.items[k], nil }

func (m *Impl) reset() { clear(m.items) }
