// Package procstatus reads this process's memory figures from the
// kernel's /proc/self/status: VmRSS (resident now) and VmHWM (the peak).
//
// VmHWM is the figure to use for a child's peak: on Linux the rusage of a
// child that a Go program started (os/exec) also counts the resident size
// of the parent it was started from, which os/exec shares the memory of
// until the child's exec.
package procstatus

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Bytes returns the field of /proc/self/status named field (such as
// "VmHWM", without the colon), which the kernel writes in kB, in bytes.
// It fails where there is no such file (not Linux) or field.
func Bytes(field string) (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(strings.TrimSpace(rest), " kB")
		if !ok {
			break
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil || kb < 0 {
			break
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/self/status has no readable %s line", field)
}
