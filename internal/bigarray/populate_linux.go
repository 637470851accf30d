package bigarray

import (
	"syscall"
	"unsafe"
)

// whole returns the memory of s that lies in whole units of unit bytes, a
// power of two, aligned on unit: the part madvise may be asked about.
func whole[T any](s []T, unit uintptr) []byte {
	var t T
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	size := uintptr(len(s)) * unsafe.Sizeof(t)
	lo := (start + unit - 1) &^ (unit - 1)
	hi := (start + size) &^ (unit - 1)
	if hi <= lo {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), lo-start)), hi-lo)
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault pages in
// as a write would, without changing what they hold.
const madvPopulateWrite = 23

// Populate faults in the whole pages of the memory of s as writes would,
// without changing what s holds, so that their first use later does not
// wait for the kernel to clear them: a goroutine on an idle core can
// prepare an array the work on another core is about to fill. It asks
// for 4 MiB at a time: a goroutine in a system call keeps its P, and
// arrays of tens of megabytes populated at once by two goroutines held
// both of a 2-core machine's, while the goroutine they were prepared for
// waited (100,000 goroutines: 20 to 30 ms of the reading). It is safe
// while other goroutines read and write s. Where the kernel does not know
// the request, it does nothing.
func Populate[T any](s []T) { _ = populate(s) }

// populate is Populate, which returns the kernel's refusal.
func populate[T any](s []T) error {
	b := whole(s, uintptr(syscall.Getpagesize()))
	if len(b) == 0 {
		return nil
	}
	for len(b) > 0 {
		n := min(len(b), populateStep)
		if err := syscall.Madvise(b[:n], madvPopulateWrite); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// populateStep is the bytes populate asks the kernel to fault in at a
// time, a multiple of the page size; tests lower it.
var populateStep = 4 << 20
