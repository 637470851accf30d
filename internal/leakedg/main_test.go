package leakedg

import (
	"testing"

	"github.com/ctxleak/ctxleak/internal/testexit"
)

// TestMain ends the test binary without the race detector's exit sleep.
func TestMain(m *testing.M) { testexit.Exit(m.Run()) }
