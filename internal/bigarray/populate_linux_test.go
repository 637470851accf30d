package bigarray

import (
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// resident counts the pages of b that are in memory (mincore).
func resident(t *testing.T, b []byte) int {
	t.Helper()
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	_, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// Populate brings the whole pages of a fresh array into memory, step by
// step, and changes none of its values, even those written meanwhile.
func TestPopulate(t *testing.T) {
	page := os.Getpagesize()
	defer func(step int) { populateStep = step }(populateStep)
	populateStep = 5 * page // 39 pages: eight steps, the last of four pages
	b, err := syscall.Mmap(-1, 0, 64*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(b)
	b[5*page+3] = 7
	if n := resident(t, b); n != 1 {
		t.Fatalf("%d pages resident before, want 1", n)
	}
	s := b[page/2 : 40*page+page/2] // pages 1 to 39 are whole
	if err := populate(s); err != nil {
		t.Skipf("the kernel does not populate: %v", err)
	}
	if n := resident(t, b); n != 39 {
		t.Errorf("%d pages resident after populating 39 whole ones, want 39", n)
	}
	for i, v := range b {
		want := byte(0)
		if i == 5*page+3 {
			want = 7
		}
		if v != want {
			t.Fatalf("byte %d is %d after populating, want %d", i, v, want)
		}
	}
	Populate(s[:0]) // nothing to do
	Populate(b[1:page])
}
