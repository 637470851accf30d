//go:build pilescgo && cgo

package main

// The pattern cgo-handles, built with the tag pilescgo (it makes the
// program a cgo program, which needs a C compiler): N items of 4 KiB
// behind runtime/cgo handles that are never deleted. The runtime keeps
// them in a hash-trie map keyed by the handle's number.

import "runtime/cgo"

func init() {
	patterns["cgo-handles"] = func(n int, res *result) {
		var last cgo.Handle
		for i := range n {
			last = cgo.NewHandle(newItem(i))
		}
		if res.Addrs == nil {
			res.Addrs = map[string]uint64{}
		}
		res.Addrs["last_handle"] = uint64(last) // a number, not an address
	}
}
