package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags of the mapping of this process that holds
// addr, from /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return nil
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
