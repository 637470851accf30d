package heapdump

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGroupsByBase checks the order groupsByBase gives against a stable
// sort by base, for bases that fit a word with the index and bases too
// far apart to, with repeated bases and groups already in order.
func TestGroupsByBase(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		n      int
		spread uint64
	}{
		{"one", 1, 1 << 20},
		{"heap", 5000, 1 << 36},
		{"repeats", 3000, 64},
		{"far apart", 2000, 1 << 63},
	} {
		groups := make([]group, tc.n)
		for i := range groups {
			groups[i].base = 0xc000000000 + rng.Uint64N(tc.spread)&^7
		}
		want := make([]int, tc.n)
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(groups[a].base, groups[b].base) })
		order := groupsByBase(groups)
		sorted := slices.IsSortedFunc(groups, func(a, b group) int { return cmp.Compare(a.base, b.base) })
		if sorted != (order == nil) {
			t.Fatalf("%s: groups sorted %v, order nil %v", tc.name, sorted, order == nil)
		}
		if order == nil {
			continue
		}
		mask := uint64(1)<<orderBits(tc.n) - 1
		for i, o := range order {
			if got := int(o & mask); got != want[i] {
				t.Fatalf("%s: position %d: group %d, want %d", tc.name, i, got, want[i])
			}
		}
	}
	inOrder := []group{{base: 8}, {base: 16}, {base: 16}, {base: 32}}
	if order := groupsByBase(inOrder); order != nil {
		t.Errorf("groups in order: got order %v, want nil", order)
	}
}
