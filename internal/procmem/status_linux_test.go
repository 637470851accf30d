package procmem

import (
	"syscall"
	"testing"
)

// VmRSS grows by a fresh mapping touched page by page, and VmHWM is at
// least what is resident then. The memory is mapped for the test, not
// taken from Go's heap, whose pages a run before (go test -count=2) left
// resident for this one to reuse.
func TestStatusGrows(t *testing.T) {
	const size = 64 << 20
	before, err := Status("VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	rss, hwm := residentAndPeak(t)
	if rss < before+size/2 {
		t.Errorf("VmRSS %d after touching 64 MiB, %d before: want it 32 MiB higher at least", rss, before)
	}
	if hwm < rss {
		t.Errorf("VmHWM %d below VmRSS %d", hwm, rss)
	}
}
