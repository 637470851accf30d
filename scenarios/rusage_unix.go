//go:build unix

package scenarios

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS returns the peak resident set size of an exited process, as the
// kernel accounted it, or 0 if unknown.
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes
	}
	return int64(ru.Maxrss) << 10 // KiB
}
