package watch_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/watch"
)

// jobCache is the leak of TestTrackedValueIsReported: a global that keeps
// job payloads.
var jobCache [][]byte

func TestTrackedValueIsReported(t *testing.T) {
	reports := make(chan watch.Report, 1)
	var log syncBuffer
	dumpDir := t.TempDir()
	w := watch.New(watch.Options{
		Grace:     20 * time.Millisecond,
		Threshold: 1,
		DumpDir:   dumpDir,
		Logger:    slog.New(slog.NewTextHandler(&log, nil)),
		OnReport:  func(r watch.Report) { reports <- r },
	})
	defer w.Close()

	payload := make([]byte, 32<<10)
	jobCache = append(jobCache, payload)
	_, _, line, _ := runtime.Caller(0)
	if err := w.Track(payload, "job payload"); err != nil {
		t.Fatal(err)
	}
	freed := make([]byte, 32<<10)
	if err := w.Track(freed, "freed payload"); err != nil {
		t.Fatal(err)
	}
	freed = nil

	var rep watch.Report
	select {
	case rep = <-reports:
	case <-time.After(60 * time.Second):
		t.Fatalf("no report after 60 s; stats %+v", w.Stats())
	}
	if rep.OutlivedCount != 1 || len(rep.Values) != 1 {
		t.Fatalf("report of %d outlived, %d values; want 1, 1: %+v", rep.OutlivedCount, len(rep.Values), rep)
	}
	v := rep.Values[0]
	if v.Label != "job payload" || v.Type != "[]uint8" {
		t.Errorf("value %q %s, want \"job payload\" []uint8", v.Label, v.Type)
	}
	if v.TrackedAt == nil || !strings.HasSuffix(v.TrackedAt.File, "track_test.go") || v.TrackedAt.Line != line+1 {
		t.Errorf("tracked at %v, want track_test.go:%d", v.TrackedAt, line+1)
	}
	if v.Holder == nil || v.Holder.Root.Global == "" {
		t.Errorf("holder %+v, want a global", v.Holder)
	}
	if fi, err := os.Stat(rep.Dump); err != nil || filepath.Dir(rep.Dump) != dumpDir || fi.Mode().Perm() != 0o600 {
		t.Errorf("the dump %q: %v, want a 0600 file kept in %s", rep.Dump, err, dumpDir)
	}
	if line := log.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, "level=WARN") ||
		!strings.Contains(line, `job payload`) || !strings.Contains(line, "is held by global") || !strings.Contains(line, "outlived=1") {
		t.Errorf("log %q, want one warning naming the payload and its holder", line)
	}
	st := w.Stats()
	if l := st.Label("freed payload"); l.Watched != 1 || l.Outlived != 0 {
		t.Errorf("freed payload: %+v, want watched 1, outlived 0", l)
	}
	jobCache = nil
}

// syncBuffer is a bytes.Buffer for a logger of another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestTrackRefuses(t *testing.T) {
	w := watch.New(watch.Options{Logger: quietLogger()})
	defer w.Close()
	var small [8]byte
	for _, v := range []any{nil, "literal", &small, 42} {
		err := w.Track(v, "bad")
		if !errors.Is(err, watch.ErrNotTrackable) {
			t.Errorf("Track(%T): %v, want ErrNotTrackable", v, err)
		}
	}
	if st := w.Stats(); st.Watched != 0 {
		t.Errorf("refused values counted: %+v", st)
	}
}
