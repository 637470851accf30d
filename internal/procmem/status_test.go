package procmem

import (
	"runtime"
	"testing"
)

// The peak is at least what is resident now, and grows by an array
// touched page by page; a field that does not exist is an error.
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
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after, err := Status("VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	if after < hwm+32<<20 {
		t.Errorf("VmHWM %d after touching 64 MiB, %d before: want it 32 MiB higher at least", after, hwm)
	}
	runtime.KeepAlive(b)
	if _, err := Status("NoSuchField"); err == nil {
		t.Error("NoSuchField: no error")
	}
}
