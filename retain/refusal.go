package retain

import (
	"fmt"

	"github.com/ctxleak/ctxleak/internal/heapobj"
)

// ErrNotTrackable is wrapped by every error Track returns for a value the
// runtime could never report as freed.
var ErrNotTrackable = heapobj.ErrNotTrackable

// refusal is why a value cannot be tracked.
type refusal struct {
	label  string
	typ    string
	reason string
}

func (r *refusal) Error() string {
	if r.typ == "" {
		return fmt.Sprintf("retain: cannot track %q: %s", r.label, r.reason)
	}
	return fmt.Sprintf("retain: cannot track %q (%s): %s", r.label, r.typ, r.reason)
}

func (r *refusal) Unwrap() error { return ErrNotTrackable }
