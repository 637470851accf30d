//go:build linux && (amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package heapdump

import (
	"io"
	"os"
	"syscall"
)

// mapFile maps the size bytes of the file behind ra for reading, or
// returns nil when ra is not a file or the kernel refuses.
func mapFile(ra io.ReaderAt, size int64) []byte {
	f, ok := ra.(*os.File)
	if !ok || size <= 0 || size != int64(int(size)) {
		return nil
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var data []byte
	cerr := sc.Control(func(fd uintptr) {
		data, err = syscall.Mmap(int(fd), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	})
	if cerr != nil || err != nil {
		return nil
	}
	return data
}

func unmapFile(b []byte) { _ = syscall.Munmap(b) }

// dropPages removes pages of a mapping from the process, so that they no
// longer count in its resident memory; the file stays in the page cache.
func dropPages(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): map pages in as a
// read would.
const madvPopulateRead = 22

// populatePages maps the pages of b, part of a mapping, into the process
// in one call, as reading them would one fault at a time. A kernel that
// does not know the request refuses it, and nothing changes.
func populatePages(b []byte) error { return syscall.Madvise(b, madvPopulateRead) }
