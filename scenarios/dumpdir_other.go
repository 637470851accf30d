//go:build !linux

package scenarios

// memoryTempDir is a directory in memory for temporary heap dumps, when
// the system has one.
const memoryTempDir = ""

// freeBytes returns the space available in the file system that holds dir.
func freeBytes(dir string) (int64, bool) { return 0, false }
