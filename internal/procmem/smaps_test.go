package procmem

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// The field of the mapping that holds a live array is found, as text and
// in bytes; no mapping holds address 0; a field that is no size is an
// error in bytes.
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
	if n, found, err := MappingBytes(addr, "Rss"); err != nil || !found || n < 4096 {
		t.Errorf("Rss of a live array in bytes: %d, found %v, %v; want a page at least", n, found, err)
	}
	if _, found, _ := Mapping(0, "Rss"); found {
		t.Error("address 0: a mapping found")
	}
	if _, _, err := MappingBytes(addr, "VmFlags"); err == nil {
		t.Error("VmFlags in bytes: no error")
	}
	runtime.KeepAlive(b)
}
