package scenarios

import "syscall"

// physicalMemory returns the machine's physical memory.
func physicalMemory() (int64, bool) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0, false
	}
	total := uint64(si.Totalram) * uint64(si.Unit)
	return int64(min(total, 1<<62)), total > 0
}
