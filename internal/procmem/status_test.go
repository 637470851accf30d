package procmem

import (
	"runtime"
	"testing"
)

// The peak is at least what is resident now; a field that does not exist
// is an error. TestStatusGrows (Linux) checks that the fields follow
// memory touched.
func TestStatus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc/self/status")
	}
	rss, err := Status("VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	hwm, err := Status("VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || hwm < rss {
		t.Fatalf("VmRSS %d, VmHWM %d: want 0 < VmRSS <= VmHWM", rss, hwm)
	}
	if _, err := Status("NoSuchField"); err == nil {
		t.Error("NoSuchField: no error")
	}
}
