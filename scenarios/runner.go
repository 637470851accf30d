package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Runner runs scenarios each in a child process of its own.
type Runner struct {
	// Command returns the command that runs the named scenario with opts in
	// a child process; the child must call Run and write the Result as JSON
	// to its standard output ("ctxleak __scenario NAME ..." does).
	Command func(ctx context.Context, name string, opts Options) *exec.Cmd
	// Options are passed to every child.
	Options Options
	// Timeout bounds each child; one that takes longer is killed and the
	// timeout is its scenario's error. Zero means no limit.
	Timeout time.Duration
}

// stderrTail and stderrLines bound how much of a failed child's stderr
// goes into its error.
const (
	stderrTail  = 2 << 10
	stderrLines = 12
)

// killGrace is how long a killed child's output pipes may stay open.
const killGrace = 2 * time.Second

// Run runs s in a child process and returns its judged Result. It never
// fails: a child that crashes, hangs past the timeout, is killed or writes
// something unreadable yields a Result whose Error says so, with the tail of
// the child's stderr, and whose Verdict is Failed.
func (r *Runner) Run(ctx context.Context, s *Scenario) Result {
	res := r.run(ctx, s)
	s.Judge(&res)
	return res
}

func (r *Runner) run(ctx context.Context, s *Scenario) Result {
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	cmd := r.Command(ctx, s.Name, r.Options)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = killGrace
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)

	fail := func(format string, args ...any) Result {
		msg := fmt.Sprintf(format, args...)
		if tail := tailOf(stderr.Bytes()); tail != "" {
			msg += "; stderr:\n" + tail
		}
		return Result{Name: s.Name, Error: msg, WallMillis: wall.Milliseconds(),
			PeakRSSBytes: maxRSS(cmd.ProcessState)}
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded && r.Timeout > 0:
		return fail("child timed out after %v and was killed", r.Timeout)
	case ctx.Err() != nil:
		return fail("child stopped: %v", context.Cause(ctx))
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fail("child failed (%v)", ee.ProcessState)
		}
		return fail("running child: %v", err)
	}
	var res Result
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return fail("reading the child's result: %v", err)
	}
	if res.Name != s.Name {
		return fail("the child ran %q, not %q", res.Name, s.Name)
	}
	res.WallMillis = wall.Milliseconds()
	// The child reads its own VmHWM just before it writes its result; the
	// kernel's figure at exit also covers that writing.
	res.PeakRSSBytes = max(res.PeakRSSBytes, maxRSS(cmd.ProcessState))
	return res
}

// tailOf returns the part of a child's stderr worth showing, at most
// stderrLines lines and stderrTail bytes: from the last "panic: " or
// "fatal error: " line when there is one (the traceback follows it), else
// the last lines.
func tailOf(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "panic: ") || strings.HasPrefix(lines[i], "fatal error: ") {
			head := lines[i:]
			more := len(head) > stderrLines
			if more {
				head = head[:stderrLines]
			}
			out := clip(strings.Join(head, "\n"), false)
			if more {
				out += "\n..."
			}
			return out
		}
	}
	if len(lines) > stderrLines {
		return "...\n" + clip(strings.Join(lines[len(lines)-stderrLines:], "\n"), true)
	}
	return clip(s, true)
}

// clip cuts s to stderrTail bytes, keeping its end or its start.
func clip(s string, keepEnd bool) string {
	if len(s) <= stderrTail {
		return s
	}
	if keepEnd {
		return "..." + strings.ToValidUTF8(s[len(s)-stderrTail:], "")
	}
	return strings.ToValidUTF8(s[:stderrTail], "") + "..."
}
