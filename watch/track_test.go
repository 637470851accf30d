package watch_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/watch"
)

// jobCache is the leak of TestTrackedValueIsReported: a global that keeps
// job payloads.
var jobCache [][]byte

func TestTrackedValueIsReported(t *testing.T) {
	reports := make(chan watch.Report, 1)
	w := watch.New(watch.Options{
		Grace:     20 * time.Millisecond,
		Threshold: 1,
		Logger:    quietLogger(),
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
	st := w.Stats()
	if l := st.Label("freed payload"); l.Watched != 1 || l.Outlived != 0 {
		t.Errorf("freed payload: %+v, want watched 1, outlived 0", l)
	}
	jobCache = nil
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
