package hugepage

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/ctxleak/ctxleak/internal/procmem"
)

// vmFlags returns the VmFlags of the mapping of this process that holds
// addr.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	v, found, err := procmem.Mapping(addr, "VmFlags")
	if err != nil {
		t.Skip(err)
	}
	if !found {
		t.Fatalf("no mapping holds %#x", addr)
	}
	return strings.Fields(v)
}

// A large array's whole huge pages are advised: "hg" in the flags of
// their mapping. With GODEBUG=disablethp=1 they are not (the test runs
// itself again to see it, since the setting is read once).
func TestMakeAdvises(t *testing.T) {
	want := os.Getenv("HUGEPAGE_TEST_WANT") != "none"
	if err := advise(make([]byte, Min)); err != nil && want {
		t.Skipf("the kernel gives no transparent huge pages: %v", err)
	}
	s := Make[uint64](1<<20, 1<<20) // 8 MiB: at least three whole huge pages
	if len(s) != 1<<20 || cap(s) != 1<<20 {
		t.Errorf("len %d cap %d, want %d", len(s), cap(s), 1<<20)
	}
	start := uintptr(unsafe.Pointer(&s[0]))
	inside := (start + hugePage - 1) &^ (hugePage - 1) // the first whole huge page
	if flags := vmFlags(t, inside); contains(flags, "hg") != want {
		t.Errorf("8 MiB array at %#x (GODEBUG=%q): flags %v, want hg %v", start, os.Getenv("GODEBUG"), flags, want)
	}
	if !want {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMakeAdvises$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GODEBUG=disablethp=1", "HUGEPAGE_TEST_WANT=none")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("with GODEBUG=disablethp=1: %v\n%s", err, out)
	}
}

func contains(flags []string, f string) bool {
	for _, x := range flags {
		if x == f {
			return true
		}
	}
	return false
}

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

// Populate brings the whole pages of a fresh array into memory, and
// changes none of its values, even those written meanwhile.
func TestPopulate(t *testing.T) {
	page := os.Getpagesize()
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
