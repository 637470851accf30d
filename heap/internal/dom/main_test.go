package dom

import (
	"testing"

	"github.com/ctxleak/ctxleak/internal/testexit"
)

// TestMain ends the test binary without the race detector's exit sleep.
// Every graph, however small, has its arrays populated on another
// goroutine, and its root's kids' predecessors collected on every core,
// as big ones do.
func TestMain(m *testing.M) {
	populateMin = 0
	collectParallelMin = 0
	testexit.Exit(m.Run())
}
