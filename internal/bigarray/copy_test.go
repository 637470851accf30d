package bigarray

import (
	"slices"
	"testing"
	"unsafe"
)

// Copy copies what copy does, across its steps' boundaries, for elements
// of two sizes.
func TestCopy(t *testing.T) {
	type odd struct {
		a, b uint64
		c    uint32
	}
	checkCopy(t, func(i int) uint64 { return uint64(i)*0x9e3779b97f4a7c15 + 1 })
	checkCopy(t, func(i int) odd { return odd{uint64(i), uint64(i) << 3, uint32(i)} })
}

// checkCopy compares Copy with copy for arrays of elements made by elem,
// of lengths around its step for T, into destinations as long, longer and
// shorter.
func checkCopy[T comparable](t *testing.T, elem func(int) T) {
	t.Helper()
	var x T
	step := copyStep / int(unsafe.Sizeof(x))
	for _, n := range []int{0, 1, step - 1, step, step + 1, 3*step + 5} {
		src := make([]T, n)
		for i := range src {
			src[i] = elem(i)
		}
		for _, m := range []int{n, n + 7, n / 2} {
			want, got := make([]T, m), make([]T, m)
			copy(want, src)
			Copy(got, src)
			if !slices.Equal(got, want) {
				t.Errorf("%T: %d elements into %d: not what copy gives", x, n, m)
			}
		}
	}
}

// CopyOnCores copies what copy does, in parts on several goroutines,
// across the parts' boundaries, from lengths below the size it splits
// from.
func TestCopyOnCores(t *testing.T) {
	step := copyParallelMin / 8
	for _, n := range []int{0, 1, step - 1, step, 3*step + 5} {
		src := make([]uint64, n)
		for i := range src {
			src[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
		}
		for _, cores := range []int{0, 1, 2, 3, 8} {
			for _, m := range []int{n, n + 7, n / 2} {
				want, got := make([]uint64, m), make([]uint64, m)
				copy(want, src)
				CopyOnCores(got, src, cores)
				if !slices.Equal(got, want) {
					t.Errorf("%d elements into %d on %d cores: not what copy gives", n, m, cores)
				}
			}
		}
	}
}

// Grow keeps the elements and the length, with room for c.
func TestGrow(t *testing.T) {
	s := make([]uint32, 100_000)
	for i := range s {
		s[i] = uint32(i) * 7
	}
	g := Grow(s, 150_000)
	if len(g) != len(s) || cap(g) != 150_000 || !slices.Equal(g, s) {
		t.Fatalf("Grow: length %d, room %d, same elements %v; want %d, 150000, true", len(g), cap(g), slices.Equal(g, s), len(s))
	}
	if &g[0] == &s[0] {
		t.Error("Grow returned the same array")
	}
}

// Append appends what append does, growing into a new array when full.
func TestAppend(t *testing.T) {
	var s, want []uint64
	for i := range uint64(5000) {
		s = Append(s, i, i*3)
		want = append(want, i, i*3)
	}
	s = Append(s)
	if !slices.Equal(s, want) {
		t.Fatalf("Append: %d elements, not append's %d", len(s), len(want))
	}
	full := make([]uint64, 4)
	if g := Append(full, 9); &g[0] == &full[0] || cap(g) < 8 || !slices.Equal(g, []uint64{0, 0, 0, 0, 9}) {
		t.Errorf("Append to a full array: %v, room %d", g, cap(g))
	}
}
