package retain_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/ctxleak/ctxleak/retain"
)

// TestSynctestBubble serves every pattern inside a testing/synctest bubble,
// where the back-off and the timeout run on the bubble's fake clock: the
// verdicts must be the same as outside.
func TestSynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server, stop := startServer()
		defer stop()
		for _, p := range patterns {
			tb := &recordingTB{name: t.Name()}
			tr := retain.New(tb, retain.NoDump(), retain.Timeout(time.Second))
			release := serve(p, tr, server)
			ok := tr.AssertReleased()
			release()
			if ok == p.retained {
				t.Errorf("%s: AssertReleased = %v in a bubble; failures:\n%s", p.name, ok, tb.text())
			}
		}
	})
}
