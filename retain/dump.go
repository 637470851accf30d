package retain

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ctxleak/ctxleak/internal/selfdump"
)

// dumpFile is a heap dump written for a failure.
type dumpFile struct {
	path   string
	binary string // kept copy of the executable, or ""
	size   int64
	took   time.Duration // time to write the dump, world stopped
}

// writeDump writes a heap dump of the process for the tracker named name,
// into dir, or $CTXLEAK_DUMP_DIR, or a new directory under os.TempDir. The
// file is new (never an existing one) and has mode 0600.
func writeDump(dir, name string) (dumpFile, error) {
	base := fileName(name)
	dir, _, err := dumpDir(dir, base)
	if err != nil {
		return dumpFile{}, err
	}
	sd, err := selfdump.Write(dir, base+"-*.heapdump")
	d := dumpFile{path: sd.Path, size: sd.Size, took: sd.Took}
	if err != nil {
		return d, err
	}
	d.binary = keepBinary(dir)
	return d, nil
}

// writeDumpThenProfile is writeDump followed by Go 1.27's goroutineleak
// profile, in that order (a dump after the profile is fatal, see
// selfdump.WriteThenProfileLeaks). The dump's path is empty when it was not
// written, with err saying why; the profile is taken unless err is
// selfdump.ErrNoLeakProfile or no directory could be made. remove deletes
// the dump, and the directory when it made it, for a check that passes.
func writeDumpThenProfile(dir, name string) (d dumpFile, remove func(), err error) {
	base := fileName(name)
	dir, made, err := dumpDir(dir, base)
	if err != nil {
		return dumpFile{}, func() {}, err
	}
	sd, _, err := selfdump.WriteThenProfileLeaks(dir, base+"-*.heapdump", io.Discard)
	d = dumpFile{path: sd.Path, size: sd.Size, took: sd.Took}
	remove = func() {
		if made {
			os.RemoveAll(dir)
		} else if d.path != "" {
			os.Remove(d.path)
		}
	}
	return d, remove, err
}

// dumpDir returns the directory for a dump: dir, made (0700) when missing,
// or $CTXLEAK_DUMP_DIR, or a new directory under os.TempDir named after
// base, and whether it made a new one.
func dumpDir(dir, base string) (string, bool, error) {
	if dir == "" {
		dir = os.Getenv(DumpDirEnv)
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "ctxleak-"+base+"-*")
		if err != nil {
			return "", false, fmt.Errorf("making a directory for the heap dump: %w", err)
		}
		return d, true, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("making the heap dump directory: %w", err)
	}
	return dir, false, nil
}

// fileName turns a test name into something safe in a file name.
func fileName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 60 {
			break
		}
	}
	if b.Len() == 0 {
		return "ctxleak"
	}
	return b.String()
}

// kept maps a dump directory to the copy of the executable kept in it, so
// that a process keeps at most one copy per directory.
var kept struct {
	sync.Mutex
	bins map[string]string
}

// keepBinary keeps a copy of the running executable in dir, a hard link when
// the file system allows it, and returns its path, or "" if it could not.
// `go test` removes the test binary when it exits, and the dump alone has no
// symbol names.
func keepBinary(dir string) string {
	kept.Lock()
	defer kept.Unlock()
	if p, ok := kept.bins[dir]; ok {
		return p
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	dst := filepath.Join(dir, fmt.Sprintf("%s-%d.bin", filepath.Base(exe), os.Getpid()))
	if err := os.Link(exe, dst); err != nil {
		dst, err = copyFile(exe, dir, filepath.Base(exe)+"-*.bin")
		if err != nil {
			return ""
		}
	}
	if kept.bins == nil {
		kept.bins = make(map[string]string)
	}
	kept.bins[dir] = dst
	return dst
}

func copyFile(src, dir, pattern string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, in)
	err = errors.Join(err, out.Chmod(0o700), out.Close())
	if err != nil {
		os.Remove(out.Name())
		return "", err
	}
	return out.Name(), nil
}
