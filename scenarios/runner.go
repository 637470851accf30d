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

// stderrTail is how much of a failed child's stderr goes into its error.
const stderrTail = 2 << 10

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
		return Result{Name: s.Name, Error: msg, WallMillis: wall.Milliseconds()}
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
	return res
}

// tailOf returns the part of a child's stderr worth showing, at most
// stderrTail bytes cut at line boundaries: from the last "panic: " or
// "fatal error: " line when there is one (the traceback follows it), else
// the last lines.
func tailOf(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	for _, marker := range []string{"\npanic: ", "\nfatal error: "} {
		if i := strings.LastIndex("\n"+s, marker); i >= 0 {
			s = s[i:]
			if len(s) > stderrTail {
				s = s[:stderrTail]
				if j := strings.LastIndexByte(s, '\n'); j > 0 {
					s = s[:j]
				}
				s += "\n..."
			}
			return s
		}
	}
	if len(s) > stderrTail {
		s = s[len(s)-stderrTail:]
		if j := strings.IndexByte(s, '\n'); j >= 0 {
			s = s[j+1:]
		}
		s = "...\n" + s
	}
	return s
}
