//go:build unix

package scenarios

import (
	"errors"
	"os"
	"syscall"
)

// ownedByMe reports whether the file was created by this user.
func ownedByMe(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// processExists reports whether a process with this ID exists. A process
// of another user exists too (EPERM).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}
