package retain_test

import (
	"fmt"
	"strings"
	"sync"
)

// recordingTB is a retain.TB that records failures instead of failing, so
// tests can check that AssertReleased and Track do fail.
type recordingTB struct {
	name string
	mu   sync.Mutex
	errs []string
	logs []string
}

func (r *recordingTB) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) logText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.logs, "\n")
}

func (r *recordingTB) Helper()      {}
func (r *recordingTB) Name() string { return r.name }

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func (r *recordingTB) text() string { return strings.Join(r.failures(), "\n") }
