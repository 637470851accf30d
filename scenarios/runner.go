package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	// Holders, if set, names what keeps the payload alive at each phase
	// where it is: each child writes heap dumps into a subdirectory of
	// Options.DumpDir named after its scenario (created, mode 0700; it must
	// then be set), which Holders reads once the child has exited, and the
	// expected holders are checked.
	Holders *Explainer
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
	r.explain(s, &res)
	return res
}

// RunAll runs the scenarios of list one after another, each in a child
// process, and calls done with each judged Result, in order. The holders
// of one scenario are looked for while the next one's child runs. It stops
// starting children when ctx is done; done has been called for every
// scenario that ran when RunAll returns. It returns ctx's error when ctx
// was done before the last scenario's result was handed to done (a child
// stopped by it, the last one included, or children never started), and
// nil otherwise.
func (r *Runner) RunAll(ctx context.Context, list []*Scenario, done func(Result)) error {
	type pending struct {
		res   Result
		ready chan struct{}
	}
	queue := make(chan *pending, len(list))
	finished := make(chan struct{})
	var lastErr error // ctx's error just before the last result went to done
	go func() {
		defer close(finished)
		n := 0
		for p := range queue {
			<-p.ready
			if n++; n == len(list) {
				lastErr = ctx.Err()
			}
			done(p.res)
		}
	}()
	// One analysis at a time: the previous one's ready channel is the turn.
	turn := make(chan struct{})
	close(turn)
	var err error
	for _, s := range list {
		if err = ctx.Err(); err != nil {
			break
		}
		p := &pending{res: r.run(ctx, s), ready: make(chan struct{})}
		queue <- p
		go func(s *Scenario, prev <-chan struct{}) {
			<-prev
			r.explain(s, &p.res)
			close(p.ready)
		}(s, turn)
		turn = p.ready
	}
	close(queue)
	<-finished
	if err != nil {
		return err
	}
	return lastErr
}

// explain names the holders of res when the Runner looks for them, removes
// the scenario's dump directory unless the dumps are kept, and judges res.
func (r *Runner) explain(s *Scenario, res *Result) {
	if r.Holders != nil {
		r.Holders.Explain(res)
		if !r.Holders.Keep {
			os.RemoveAll(r.dumpDir(s))
		}
	}
	s.Judge(res)
}

// dumpDir is where the child of s writes its heap dumps, or "".
func (r *Runner) dumpDir(s *Scenario) string {
	if r.Holders == nil || r.Options.DumpDir == "" {
		return ""
	}
	return filepath.Join(r.Options.DumpDir, s.Name)
}

func (r *Runner) run(ctx context.Context, s *Scenario) Result {
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	opts := r.Options
	opts.DumpDir = r.dumpDir(s)
	if opts.DumpDir != "" {
		if err := os.MkdirAll(opts.DumpDir, 0o700); err != nil {
			return Result{Name: s.Name, Error: fmt.Sprintf("heap dumps: %v", err)}
		}
	}
	cmd := r.Command(ctx, s.Name, opts)
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
	// The child reads its own VmHWM just before it writes its result. The
	// kernel's figure at exit (rusage) would also cover that writing, but
	// on Linux it counts the RSS of the parent the child was started from
	// too, and the parent, which reads heap dumps, may be the larger.
	if res.PeakRSSBytes == 0 {
		res.PeakRSSBytes = maxRSS(cmd.ProcessState)
	}
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
