package scenarios

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TempDumpDir creates a fresh directory, mode 0700, for the heap dumps of a
// run whose dumps are not kept, and returns its path; the caller removes
// it. It goes under $TMPDIR when that is set, else under /dev/shm (memory:
// a 50 MiB dump is written there about four times faster than to a disk)
// when that has room for the dumps that may exist at once with payloads of
// payloadBytes (two phases of one child and two of the next, each the
// payload and some), else under the system's temporary directory.
//
// Its name holds the process ID ("ctxleak-run-<pid>-<random>"): before
// creating it, TempDumpDir removes the directories of runs that were
// killed before they could remove their own (see RemoveStaleDumpDirs).
func TempDumpDir(payloadBytes int64) (string, error) {
	base := dumpTempBase(payloadBytes)
	RemoveStaleDumpDirs(base)
	if base != os.TempDir() {
		RemoveStaleDumpDirs(os.TempDir())
	}
	pattern := dumpDirPrefix + strconv.Itoa(os.Getpid()) + "-"
	dir, err := os.MkdirTemp(base, pattern)
	if err != nil {
		dir, err = os.MkdirTemp("", pattern)
	}
	return dir, err
}

// dumpDirPrefix starts the name of every directory TempDumpDir creates.
const dumpDirPrefix = "ctxleak-run-"

// RemoveStaleDumpDirs removes, from the directory base, the dump
// directories of "ctxleak run" processes that are gone: only directories
// named as TempDumpDir names them, owned by this user, whose process no
// longer exists. It returns the directories removed. Errors are ignored:
// a directory that cannot be removed stays, as it was.
func RemoveStaleDumpDirs(base string) []string {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), dumpDirPrefix)
		if !ok || !e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() || !ownedByMe(info) || processExists(pid) {
			continue
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

// dumpTempBase is the directory TempDumpDir creates its directory in.
func dumpTempBase(payloadBytes int64) string {
	if os.Getenv("TMPDIR") == "" && memoryTempDir != "" {
		need := 4 * (payloadBytes + 64<<20)
		if free, ok := freeBytes(memoryTempDir); ok && free >= need {
			return memoryTempDir
		}
	}
	return os.TempDir()
}
