package selfdump

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// ErrNoLeakProfile is returned by WriteThenProfileLeaks on a Go without
// the goroutineleak profile (before 1.27).
var ErrNoLeakProfile = errors.New("this Go has no goroutineleak profile (Go 1.27 and later have it)")

// WriteThenProfileLeaks writes a heap dump into a new file of dir, as
// Write does, and then Go 1.27's goroutineleak profile to w (gzipped
// profile.proto), both under the dump lock and in that order: the profile
// marks the goroutines it proves leaked, and from then on every dump of
// the process is refused while any is marked, so a caller that wants both
// takes them here. It returns the dump and the number of leaked
// goroutines; on a Go without the profile, the dump and ErrNoLeakProfile.
// A dump that Check refuses is not written, and the profile is still
// taken.
func WriteThenProfileLeaks(dir, pattern string, w io.Writer) (Dump, int, error) {
	mu.Lock()
	defer mu.Unlock()
	var d Dump
	dumpErr := Check()
	if dumpErr == nil {
		f, err := os.CreateTemp(dir, pattern) // 0600, O_EXCL
		if err != nil {
			return Dump{}, 0, fmt.Errorf("creating the heap dump: %w", err)
		}
		if d, err = write(f); err != nil {
			return Dump{}, 0, err
		}
	}
	p := pprof.Lookup("goroutineleak")
	if p == nil {
		return d, 0, ErrNoLeakProfile
	}
	if err := p.WriteTo(w, 0); err != nil {
		return d, 0, errors.Join(dumpErr, fmt.Errorf("writing the goroutineleak profile: %w", err))
	}
	return d, p.Count(), dumpErr
}
