package heapdump

import (
	"slices"
	"testing"
	"unsafe"
)

// copyInSteps copies what copy does, across its steps' boundaries, for
// elements of two sizes.
func TestCopyInSteps(t *testing.T) {
	checkCopyInSteps(t, func(i int) uint64 { return uint64(i)*0x9e3779b97f4a7c15 + 1 })
	checkCopyInSteps(t, func(i int) Frame { return Frame{Goroutine: i, SP: uint64(i) << 3, slotsEnd: uint32(i)} })
}

// checkCopyInSteps compares copyInSteps with copy for arrays of elements
// made by elem, of lengths around its step for T, into destinations as
// long, longer and shorter.
func checkCopyInSteps[T comparable](t *testing.T, elem func(int) T) {
	t.Helper()
	var x T
	step := (256 << 10) / int(unsafe.Sizeof(x))
	for _, n := range []int{0, 1, step - 1, step, step + 1, 3*step + 5} {
		src := make([]T, n)
		for i := range src {
			src[i] = elem(i)
		}
		for _, m := range []int{n, n + 7, n / 2} {
			want, got := make([]T, m), make([]T, m)
			copy(want, src)
			copyInSteps(got, src)
			if !slices.Equal(got, want) {
				t.Errorf("%T: %d elements into %d: not what copy gives", x, n, m)
			}
		}
	}
}
