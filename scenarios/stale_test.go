//go:build unix

package scenarios

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRemoveStaleDumpDirs: the dump directory of a run whose process is
// gone is removed, with its dumps; those of live processes, of other
// programs and of this process stay.
func TestRemoveStaleDumpDirs(t *testing.T) {
	base := t.TempDir()
	// A process that has exited: its ID is free (until reused).
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	// A live process: this test's parent (go test).
	live := os.Getppid()
	mk := func(name string) string {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "p.heapdump"), []byte("dump"), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	stale := mk(dumpDirPrefix + strconv.Itoa(dead.Process.Pid) + "-123")
	keep := []string{
		mk(dumpDirPrefix + strconv.Itoa(live) + "-456"),
		mk(dumpDirPrefix + strconv.Itoa(os.Getpid()) + "-789"),
		mk(dumpDirPrefix + "oldstyle"),
		mk("other-" + strconv.Itoa(dead.Process.Pid) + "-1"),
	}
	// A symbolic link named like a stale directory is not followed.
	target := mk("target")
	link := filepath.Join(base, dumpDirPrefix+strconv.Itoa(dead.Process.Pid)+"-link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}

	removed := RemoveStaleDumpDirs(base)
	if !slices.Equal(removed, []string{stale}) {
		t.Errorf("removed %v, want %v", removed, []string{stale})
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", stale, err)
	}
	for _, dir := range append(keep, target, link) {
		if _, err := os.Stat(filepath.Join(dir, "p.heapdump")); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

// TestTempDumpDirName: the directory's name holds this process's ID, and
// making one removes the stale ones beside it.
func TestTempDumpDirName(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	stale := filepath.Join(tmp, dumpDirPrefix+strconv.Itoa(dead.Process.Pid)+"-1")
	if err := os.Mkdir(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := TempDumpDir(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if want := dumpDirPrefix + strconv.Itoa(os.Getpid()) + "-"; filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), want) {
		t.Errorf("TempDumpDir = %s, want %s/%s*", dir, tmp, want)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v", dir, st.Mode(), err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale %s still there: %v", stale, err)
	}
}
