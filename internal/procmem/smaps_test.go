package procmem

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// The field of the mapping that holds a live array is found; no mapping
// holds address 0.
func TestMapping(t *testing.T) {
	b := make([]byte, 1<<20)
	b[0] = 1
	addr := uintptr(unsafe.Pointer(&b[0]))
	v, found, err := Mapping(addr, "Rss")
	if err != nil {
		t.Skip(err)
	}
	if !found || !strings.HasSuffix(v, " kB") {
		t.Errorf("Rss of a live array: %q, found %v; want a size in kB", v, found)
	}
	if _, found, _ := Mapping(0, "Rss"); found {
		t.Error("address 0: a mapping found")
	}
	runtime.KeepAlive(b)
}
