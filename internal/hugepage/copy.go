package hugepage

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
// c must be at least the length of, filled by Copy so that growing a
// large array does not hold a collection back for one long copy. Unlike
// Make, it does not ask for huge pages: a grown array's capacity is an
// estimate, and the huge pages of room it never fills, each cleared
// whole, and the old arrays given back, cost more in the kernel than the
// small faults they save. On a 10M-node dump (1.2 GB), whose reader grows
// its arrays by estimates, asking made the run spend 1.3 to 1.8 s in the
// kernel rather than 0.5 to 0.9 s, and take 2.1 to 3.2 times the decode
// floor rather than 1.8 to 2.8 (8 interleaved runs each).
func Grow[T any](s []T, c int) []T {
	t := make([]T, len(s), c)
	Copy(t, s)
	return t
}
