package cost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// MinCount is the fewest runs of each row: a 95% confidence interval of a
// median needs at least 6 samples.
const MinCount = 6

// Runner measures rows in child processes, Count times each, interleaved:
// run i measures every row once (starting at a different row each run)
// before run i+1 begins, so a slow spell of the machine spreads over all
// rows instead of falling on one.
type Runner struct {
	// Command returns the command that measures the named rows with s in
	// a child process; the child must call RunChild with them and its
	// standard output ("ctxleak __cost NAME..." does).
	Command func(ctx context.Context, names []string, s Settings) *exec.Cmd
	// Settings are passed to every child.
	Settings Settings
	// Count is how many samples each row gets (at least MinCount).
	Count int
	// Batch measures all the rows of a run in one child rather than one
	// child per row: faster, less isolated (the tests use it).
	Batch bool
	// Timeout bounds each child; zero means no limit.
	Timeout time.Duration
	// Progress, if set, is called before each child starts.
	Progress func(run int, names []string)
}

// Run measures list and returns the report, or the first child's failure.
func (r *Runner) Run(ctx context.Context, list []*Measurement) (*Report, error) {
	if r.Count < MinCount {
		return nil, fmt.Errorf("count %d: want at least %d (a 95%% interval of a median needs %d samples)", r.Count, MinCount, MinCount)
	}
	if err := r.Settings.Check(); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, errors.New("no measurement to run")
	}
	samples := map[string][]*Sample{}
	for run := range r.Count {
		order := append(append([]*Measurement(nil), list[run%len(list):]...), list[:run%len(list)]...)
		var groups [][]string
		for _, m := range order {
			if r.Batch && len(groups) > 0 {
				groups[0] = append(groups[0], m.Name)
			} else {
				groups = append(groups, []string{m.Name})
			}
		}
		for _, names := range groups {
			if r.Progress != nil {
				r.Progress(run, names)
			}
			got, err := r.child(ctx, names)
			if err != nil {
				return nil, err
			}
			for _, s := range got {
				samples[s.Name] = append(samples[s.Name], s)
			}
		}
	}
	rep := &Report{
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Count:      r.Count,
		Settings:   r.Settings,
	}
	for _, m := range list {
		rep.Rows = append(rep.Rows, newRow(m, samples[m.Name]))
	}
	return rep, nil
}

// child runs one child process measuring names and reads its samples.
func (r *Runner) child(ctx context.Context, names []string) ([]*Sample, error) {
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	cmd := r.Command(ctx, names, r.Settings)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("measuring %s: child killed after %v", strings.Join(names, ", "), r.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("measuring %s: child: %v: %s", strings.Join(names, ", "), err, tail(stderr.String()))
	}
	var out []*Sample
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("measuring %s: reading the child's output: %v", strings.Join(names, ", "), err)
		}
		out = append(out, &s)
	}
	if len(out) != len(names) {
		return nil, fmt.Errorf("measuring %s: the child wrote %d samples, want %d", strings.Join(names, ", "), len(out), len(names))
	}
	for i, s := range out {
		if s.Name != names[i] {
			return nil, fmt.Errorf("measuring %s: the child measured %q", names[i], s.Name)
		}
	}
	return out, nil
}

// tail returns the last few lines of a child's stderr.
func tail(s string) string {
	s = strings.TrimSpace(s)
	lines := strings.Split(s, "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}
