// Package testbuild builds the helper programs of tests with the go command
// and keeps each executable between test runs, so that a run whose sources
// have not changed does not link them again.
//
// The go command skips the link when the file named by -o is already up to
// date (its build ID matches the sources and flags). Build hard-links the
// kept executable to the requested path, lets go build check and, when
// needed, replace it, then keeps the result for the next run: a link of a
// small program costs about a second of CPU, the check a fifth of that.
//
// Kept executables live under the user's cache directory
// (os.UserCacheDir()/ctxleak-testbuild), one per build directory (relative
// to the module's root, so that clones of the module share them), flags,
// environment and program name: a few dozen files whatever the number of
// clones. Builds that differ in any of these never share a file, and the
// go command's check relinks whatever is out of date. A file is only ever replaced by a rename, so
// concurrent test processes see either the old or the new executable,
// never a partial one. When the cache cannot be used, Build links as
// go build alone would.
package testbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Build runs `go build -o exe args...` in the current directory with env
// added to the environment, and returns its combined output. exe must not
// exist yet; its directory must.
func Build(exe string, env []string, args ...string) ([]byte, error) {
	return BuildIn("", exe, env, args...)
}

// BuildIn is Build run in directory dir ("" for the current directory).
func BuildIn(dir, exe string, env []string, args ...string) ([]byte, error) {
	kept := keptPath(dir, exe, env, args)
	if kept != "" {
		// An error leaves exe absent: go build then links it afresh.
		os.Link(kept, exe)
	}
	cmd := exec.Command(goCommand(), append([]string{"build", "-o", exe}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("go build -o %s %s: %v", exe, strings.Join(args, " "), err)
	}
	if kept != "" {
		keep(exe, kept)
	}
	return out, nil
}

// goCommand returns the go command on PATH, or else the one of the Go
// installation that built the test.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// keptPath returns where the executable of this build is kept, or "" when
// there is no cache directory.
func keptPath(dir, exe string, env, args []string) string {
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	wd, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if root := moduleRoot(wd); root != "" {
		if rel, err := filepath.Rel(root, wd); err == nil {
			wd = rel
		}
	}
	h := sha256.New()
	for _, s := range append(append([]string{wd, filepath.Base(exe)}, env...), args...) {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	keepDir := filepath.Join(cache, "ctxleak-testbuild")
	if err := os.MkdirAll(keepDir, 0o700); err != nil {
		return ""
	}
	return filepath.Join(keepDir, hex.EncodeToString(h.Sum(nil))[:32]+"-"+filepath.Base(exe))
}

// keep makes kept a hard link to exe, replacing any older file by a
// rename, unless it is one already (go build found the kept executable up
// to date). Failures only cost the next run a link.
func keep(exe, kept string) {
	if a, err := os.Stat(exe); err == nil {
		if b, err := os.Stat(kept); err == nil && os.SameFile(a, b) {
			return
		}
	}
	tmp := fmt.Sprintf("%s.%d.tmp", kept, os.Getpid())
	os.Remove(tmp)
	if err := os.Link(exe, tmp); err != nil {
		return
	}
	if err := os.Rename(tmp, kept); err != nil {
		os.Remove(tmp)
	}
}

// moduleRoot returns the nearest directory at or above dir that holds a
// go.mod file, or "".
func moduleRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
