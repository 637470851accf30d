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
	rss, hwm := residentAndPeak(t)
	if rss <= 0 || hwm < rss {
		t.Fatalf("VmRSS %d, VmHWM %d: want 0 < VmRSS <= VmHWM", rss, hwm)
	}
	if _, err := Status("NoSuchField"); err == nil {
		t.Error("NoSuchField: no error")
	}
}

// residentAndPeak returns VmRSS and VmHWM.
func residentAndPeak(t *testing.T) (rss, hwm int64) {
	t.Helper()
	rss, err := Status("VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	if hwm, err = Status("VmHWM"); err != nil {
		t.Fatal(err)
	}
	return rss, hwm
}
