package recent

import "testing"

// TestCache checks that a kept key is found, that another key is not
// taken for it, and that a key taking its place drops it.
func TestCache(t *testing.T) {
	var c Cache[uint64, string]
	if _, ok := c.Get(Hash(0), 0); ok {
		t.Fatal("an empty cache found key 0")
	}
	c.Put(Hash(7), 7, "seven")
	if v, ok := c.Get(Hash(7), 7); !ok || v != "seven" {
		t.Fatalf("Get(7) = %q, %v; want seven, true", v, ok)
	}
	// A key of the same place but another value is not 7.
	other := uint64(8)
	for slot(Hash(other)) != slot(Hash(7)) {
		other++
	}
	if _, ok := c.Get(Hash(other), other); ok {
		t.Fatalf("Get(%d) found 7's value", other)
	}
	c.Put(Hash(other), other, "other")
	if _, ok := c.Get(Hash(7), 7); ok {
		t.Fatal("7 was still kept after a key took its place")
	}
	if v, ok := c.Get(Hash(other), other); !ok || v != "other" {
		t.Fatalf("Get(%d) = %q, %v; want other, true", other, v, ok)
	}
}
