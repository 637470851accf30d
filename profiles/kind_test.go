package profiles_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxleak/ctxleak/internal/selfdump"
	"github.com/ctxleak/ctxleak/profiles"
)

// TestHeapDumpFirst loads a real heap dump of this process, under a size
// limit far below its size: Load, Read and Parse say it is a heap dump,
// not that it is too large or a malformed profile.
func TestHeapDumpFirst(t *testing.T) {
	d, err := selfdump.WriteFile(filepath.Join(t.TempDir(), "self.heapdump"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	l := &profiles.Loader{MaxBytes: 1024}
	check := func(how string, err error) {
		t.Helper()
		var hd *profiles.HeapDumpError
		var pe *profiles.Error
		if !errors.As(err, &hd) || hd.Gzipped || !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a *HeapDumpError in an *Error", how, err)
		}
	}
	_, err = l.Load(context.Background(), d.Path)
	check("Load", err)
	_, err = l.Read("-", bytes.NewReader(data))
	check("Read", err)
	_, err = profiles.Parse("x", data)
	check("Parse", err)
	_, err = gzippedLoad(t, data)
	var hd *profiles.HeapDumpError
	if !errors.As(err, &hd) || !hd.Gzipped {
		t.Errorf("gzipped Load: %v, want a gzipped *HeapDumpError", err)
	}
}

func gzippedLoad(t *testing.T, data []byte) (*profiles.Profile, error) {
	p := filepath.Join(t.TempDir(), "self.heapdump.gz")
	if err := os.WriteFile(p, gzipped(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return (&profiles.Loader{MaxBytes: int64(len(data)) / 2}).Load(context.Background(), p)
}
