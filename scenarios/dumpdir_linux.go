package scenarios

import "syscall"

// memoryTempDir is a directory in memory for temporary heap dumps, when
// the system has one.
const memoryTempDir = "/dev/shm"

// freeBytes returns the space available to an unprivileged user in the
// file system that holds dir.
func freeBytes(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
