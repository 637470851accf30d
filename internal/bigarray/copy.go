package bigarray

import "unsafe"

// copyStep is the bytes Copy copies at a time.
const copyStep = 256 << 10

// Copy is copy(dst, src) in steps of 256 KiB. A goroutine is not preempted
// inside a copy, which lasts as long as the kernel takes to fault in the
// fresh pages it writes; meanwhile a collection that needs to scan its
// stack spins on another core and signals it again and again (on a
// virtual machine, each signal and fault a costly trip to the
// hypervisor). Between steps, the collection gets its turn.
func Copy[T any](dst, src []T) {
	var t T
	step := max(1, copyStep/max(int(unsafe.Sizeof(t)), 1))
	for i := 0; i < len(src) && i < len(dst); i += step {
		copy(dst[i:], src[i:min(i+step, len(src))])
	}
}

// Grow returns a new array of capacity c holding the elements of s, which
// c must be at least the length of, filled by Copy, so that growing a
// large array does not hold a collection back for one long copy.
func Grow[T any](s []T, c int) []T {
	t := make([]T, len(s), c)
	Copy(t, s)
	return t
}
