package heapdump

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/ctxleak/ctxleak/internal/procmem"
)

// A mapped reader keeps the pages near it resident and no others: the
// next two steps populated ahead of it, and what lies more than headroom
// and a step behind given back.
func TestSlideKeepsWindow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 40 << 20
	if err := f.Truncate(size); err != nil { // a hole reads as zeros
		t.Fatal(err)
	}
	r := newReader(f, size, path)
	defer r.close()
	if !r.mapped {
		t.Skip("the file is not mapped here")
	}
	if err := populatePages(r.buf[:pageSize]); err != nil {
		t.Skipf("the kernel does not populate mappings: %v", err)
	}
	for _, off := range []int64{0, 1 << 20, 10 << 20, 30 << 20, size - 1} {
		r.pos = int(off)
		r.slide()
		ahead := min(size, off/pageSize*pageSize+2*windowStep) - off/pageSize*pageSize
		lo, hi := ahead-pageSize, ahead+headroom+windowStep
		if rss := mappedRss(t, r.buf); rss < lo || rss > hi {
			t.Errorf("at %d: %d bytes resident, want %d to %d", off, rss, lo, hi)
		}
	}
}

// mappedRss returns the resident bytes of the mapping that holds b[0].
func mappedRss(t *testing.T, b []byte) int64 {
	t.Helper()
	n, found, err := procmem.MappingBytes(uintptr(unsafe.Pointer(unsafe.SliceData(b))), "Rss")
	switch {
	case err != nil && !found: // smaps cannot be read here
		t.Skip(err)
	case err != nil || !found:
		t.Fatalf("the mapping's Rss: found %v, %v", found, err)
	}
	return n
}
