package scenarios

import "os"

// TempDumpDir creates a fresh directory, mode 0700, for the heap dumps of a
// run whose dumps are not kept, and returns its path; the caller removes
// it. It goes under $TMPDIR when that is set, else under /dev/shm (memory:
// a 50 MiB dump is written there about four times faster than to a disk)
// when that has room for the dumps that may exist at once with payloads of
// payloadBytes (two phases of one child and two of the next, each the
// payload and some), else under the system's temporary directory.
func TempDumpDir(payloadBytes int64) (string, error) {
	dir, err := os.MkdirTemp(dumpTempBase(payloadBytes), "ctxleak-run-")
	if err != nil {
		dir, err = os.MkdirTemp("", "ctxleak-run-")
	}
	return dir, err
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
