//go:build !linux

package scenarios

// physicalMemory reports false: the size of memory is read on Linux only.
func physicalMemory() (int64, bool) { return 0, false }
