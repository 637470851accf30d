package bigarray

import (
	"sync"
	"unsafe"
)

// copyStep is the bytes Copy copies at a time.
const copyStep = 256 << 10

// Copy is copy(dst, src), for large arrays. It has the kernel fault in
// the pages it is to write first (Populate), in one call, and then copies
// in steps of 256 KiB. A goroutine is not preempted inside a copy: when
// the copy faults in fresh pages one at a time, it lasts as long as the
// kernel takes, and meanwhile a collection that needs to scan its stack
// spins on another core and signals it again and again, each signal
// landing in the copy and failing (on a virtual machine, each signal and
// fault a costly trip to the hypervisor). A goroutine in a system call is
// scanned at once; between steps, the collection gets its turn. On a dump
// of 100,000 goroutines, populating first cut the signals of one run from
// 2,300-4,200 to 80.
func Copy[T any](dst, src []T) {
	var t T
	step := max(1, copyStep/max(int(unsafe.Sizeof(t)), 1))
	if n := min(len(dst), len(src)); n > step {
		Populate(dst[:n])
	}
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

// Append is append(s, x...), but when s must grow, its elements are copied
// by Copy into an array of twice its room or more.
func Append[T any](s []T, x ...T) []T {
	if n := len(s) + len(x); n > cap(s) {
		s = Grow(s, max(n, 2*cap(s), 16))
	}
	return append(s, x...)
}

// copyParallelMin is the bytes from which CopyOnCores splits a copy.
const copyParallelMin = 1 << 20

// CopyOnCores is Copy, split into cores parts that run at once, each on a
// goroutine of its own but the first, for a copy that cores otherwise
// idle can share: each part faults in and copies its own pages. It
// returns when all are done.
func CopyOnCores[T any](dst, src []T, cores int) {
	var t T
	n := min(len(dst), len(src))
	if cores < 2 || uintptr(n)*unsafe.Sizeof(t) < copyParallelMin {
		Copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	for i := 1; i < cores; i++ {
		lo, hi := i*n/cores, (i+1)*n/cores
		wg.Go(func() { Copy(dst[lo:hi], src[lo:hi]) })
	}
	Copy(dst[:n/cores], src[:n/cores])
	wg.Wait()
}
