package cost_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/cost"
)

// childEnv marks the test binary re-executed as a measuring child.
const childEnv = "CTXLEAK_COST_CHILD"

// TestMain lets the test binary act as the child process of a Runner: with
// childEnv set, it measures the rows named by its arguments and exits.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		s := testSettings
		if err := cost.RunChild(os.Stdout, os.Args[1:], s); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testSettings keep each child short: the figures are real but small.
var testSettings = cost.Settings{OpTime: time.Millisecond, Pending: 200, LoadTime: 30 * time.Millisecond}

// testCommand re-executes this test binary as a measuring child.
func testCommand(ctx context.Context, names []string, s cost.Settings) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], names...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return cmd
}

var (
	reportOnce sync.Once
	report     *cost.Report
	reportErr  error
)

// fullReport measures every row MinCount times, all the rows of a run in
// one child, once for all the tests that read it.
func fullReport(t *testing.T) *cost.Report {
	t.Helper()
	reportOnce.Do(func() {
		r := &cost.Runner{Command: testCommand, Settings: testSettings, Count: cost.MinCount, Batch: true, Timeout: time.Minute}
		report, reportErr = r.Run(context.Background(), cost.Measurements())
	})
	if reportErr != nil {
		t.Fatal(reportErr)
	}
	return report
}
