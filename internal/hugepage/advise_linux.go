package hugepage

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page.
const hugePage = 2 << 20

// Advise asks the kernel to back the huge pages that fit in the memory of
// s with transparent huge pages, if s takes Min bytes or more. Pages
// already touched are left to the kernel's background collapsing.
func Advise[T any](s []T) { _ = advise(s) }

// advise is Advise, which returns the kernel's refusal.
func advise[T any](s []T) error {
	var t T
	size := uintptr(len(s)) * unsafe.Sizeof(t)
	if size < Min || disabled() {
		return nil
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (start + hugePage - 1) &^ (hugePage - 1)
	hi := (start + size) &^ (hugePage - 1)
	if hi <= lo {
		return nil
	}
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), lo-start)), hi-lo)
	return syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
