package traceback

import (
	"strings"
	"testing"
)

// TestHeader reads ids, wait reasons and the leaked mark from header
// lines, and refuses lines of other shapes.
func TestHeader(t *testing.T) {
	for _, c := range []struct {
		line   string
		id     uint64
		wait   string
		leaked bool
		ok     bool
	}{
		{"goroutine 1 [running]:", 1, "running", false, true},
		{"goroutine 21 [chan send (leaked), 3 minutes]:", 21, "chan send", true, true},
		{"goroutine 9 gp=0xc m=nil [sync.Mutex.Lock (leaked)]:", 9, "sync.Mutex.Lock", true, true},
		{"goroutine 1 [select (no cases)]:", 1, "select (no cases)", false, true},
		{"goroutine x [chan send (leaked)]:", 0, "", false, false},
		{"goroutine (leaked)]:", 0, "", false, false},
		{"\t/tmp/a [chan send (leaked)]:/x.go:3", 0, "", false, false},
		{"", 0, "", false, false},
	} {
		id, wait, leaked, ok := Header(c.line)
		if id != c.id || wait != c.wait || leaked != c.leaked || ok != c.ok {
			t.Errorf("Header(%q) = %d, %q, %v, %v; want %d, %q, %v, %v", c.line, id, wait, leaked, ok, c.id, c.wait, c.leaked, c.ok)
		}
	}
}

// TestAll reads this test's own goroutine, and cuts at max.
func TestAll(t *testing.T) {
	b, cut := All(64 << 20)
	if cut || !strings.Contains(string(b), "traceback.TestAll") {
		t.Errorf("All: cut %v, no TestAll frame in\n%s", cut, b)
	}
	if b, cut := All(64); !cut || len(b) != 64 {
		t.Errorf("All(64): %d bytes, cut %v; want 64, true", len(b), cut)
	}
}
