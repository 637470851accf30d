package cost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/cost"
	"github.com/ctxleak/ctxleak/internal/testexit"
)

// childEnv marks the test binary re-executed as a measuring child; its
// value is the child's Settings: "OpTime,Pending,LoadTime".
const childEnv = "CTXLEAK_COST_CHILD"

// TestMain lets the test binary act as the child process of a Runner: with
// childEnv set, it measures the rows named by its arguments and exits.
func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		if err := child(v, os.Args[1:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	testexit.Exit(m.Run())
}

// child measures names with the settings v in this process.
func child(v string, names []string) error {
	var s cost.Settings
	parts := strings.Split(v, ",")
	if len(parts) != 3 {
		return fmt.Errorf("%s=%q: want OpTime,Pending,LoadTime", childEnv, v)
	}
	var err1, err2, err3 error
	s.OpTime, err1 = time.ParseDuration(parts[0])
	s.Pending, err2 = strconv.Atoi(parts[1])
	s.LoadTime, err3 = time.ParseDuration(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	return cost.RunChild(os.Stdout, names, s)
}

// testSettings keep each child short: the figures are real but small.
var testSettings = cost.Settings{OpTime: time.Millisecond, Pending: 200, LoadTime: 30 * time.Millisecond}

// testCommand re-executes this test binary as a measuring child.
func testCommand(ctx context.Context, names []string, s cost.Settings) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], names...)
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("%s=%v,%d,%v", childEnv, s.OpTime, s.Pending, s.LoadTime),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
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
