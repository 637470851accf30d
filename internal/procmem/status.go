// Package procmem reads the kernel's accounts of this process's memory:
// figures of the whole process from /proc/self/status (VmRSS, resident
// now; VmHWM, the peak), and fields of one mapping from /proc/self/smaps
// (its resident size, its flags).
//
// VmHWM is the figure to use for a child's peak: on Linux the rusage of a
// child that a Go program started (os/exec) also counts the resident size
// of the parent it was started from, which os/exec shares the memory of
// until the child's exec.
package procmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Status returns the field of /proc/self/status named field (such as
// "VmHWM", without the colon), which the kernel writes in kB, in bytes.
// It fails where there is no such file (not Linux) or field.
func Status(field string) (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			if n, err := kB(rest); err == nil {
				return n, nil
			}
			break
		}
	}
	return 0, fmt.Errorf("/proc/self/status has no readable %s line", field)
}

// kB returns in bytes a size the kernel writes as "<n> kB", with spaces
// around it.
func kB(s string) (int64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), " kB")
	if !ok {
		return 0, fmt.Errorf("%q is not a size in kB", s)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n < 0 || n > 1<<53 {
		return 0, fmt.Errorf("%q is not a size in kB", s)
	}
	return n << 10, nil
}
