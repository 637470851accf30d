package heapdump

import (
	"errors"
	"sync/atomic"
	"testing"
)

// TestCheck checks Options.Check: it is called with the dump's frames, its
// error ends Load, and Load returns only once it has.
func TestCheck(t *testing.T) {
	d := progDump(t, "-small", "-gc=false")
	errFrames := errors.New("a frame does not match")
	var frames atomic.Int64
	var running atomic.Bool
	check := func(err error) func(*Dump) error {
		return func(dump *Dump) error {
			running.Store(true)
			defer running.Store(false)
			frames.Store(int64(len(dump.Frames)))
			return err
		}
	}

	g := d.load(t, Options{Check: check(nil)})
	if running.Load() {
		t.Error("Load returned while Check ran")
	}
	if n := frames.Load(); n == 0 || n != int64(len(g.Dump().Frames)) {
		t.Errorf("Check saw %d frames, the graph has %d", n, len(g.Dump().Frames))
	}

	if _, err := Load(d.path, Options{Check: check(errFrames)}); !errors.Is(err, errFrames) {
		t.Errorf("Load with a failing Check: got %v, want %v", err, errFrames)
	}
	if running.Load() {
		t.Error("Load returned while Check ran")
	}
}
