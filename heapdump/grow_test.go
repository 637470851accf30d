package heapdump

import (
	"slices"
	"testing"
)

// copyInSteps copies what copy does, across its steps' boundaries, for
// elements of several sizes.
func TestCopyInSteps(t *testing.T) {
	check := func(name string, n, m int) {
		t.Helper()
		src := make([]uint64, n)
		for i := range src {
			src[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
		}
		want, got := make([]uint64, m), make([]uint64, m)
		copy(want, src)
		copyInSteps(got, src)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d elements into %d: not what copy gives", name, n, m)
		}
		frames, fwant := make([]Frame, n), make([]Frame, m)
		for i := range frames {
			frames[i] = Frame{Goroutine: i, SP: src[i], slotsEnd: uint32(i)}
		}
		fgot := make([]Frame, m)
		copy(fwant, frames)
		copyInSteps(fgot, frames)
		if !slices.Equal(fgot, fwant) {
			t.Errorf("%s: %d frames into %d: not what copy gives", name, n, m)
		}
	}
	step := (256 << 10) / 8
	for _, n := range []int{0, 1, step - 1, step, step + 1, 3*step + 5} {
		check("equal", n, n)
		check("longer destination", n, n+7)
		check("shorter destination", n, n/2)
	}
}
