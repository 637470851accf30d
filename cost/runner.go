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

// DefaultCount is the runs of each row of "ctxleak cost": with 10 samples
// the 95% interval of the median runs from the 2nd to the 9th, so one
// child hit by a slow spell of the machine does not set its width.
const DefaultCount = 10

// Runner measures rows in child processes, Count times each, interleaved:
// run i measures every row once before run i+1 begins, so a slow spell of
// the machine spreads over all rows instead of falling on one. A run has a
// child of its own for all the Op rows (one sample each, in an order that
// turns with the run: a process's code and data placement moves its
// timings, so every sample of a row comes from another process), one for
// each Pending row (alone, so no other row's memory is counted), and one
// for all the Server rows, which take turns under load in short slices
// within it. The children of a run start in an order that turns too.
type Runner struct {
	// Command returns the command that measures the named rows with s in
	// a child process; the child must call RunChild with them and its
	// standard output ("ctxleak __cost NAME..." does).
	Command func(ctx context.Context, names []string, s Settings) *exec.Cmd
	// Settings are passed to every child.
	Settings Settings
	// Count is how many samples each row gets (at least MinCount).
	Count int
	// Batch measures all the rows of a run in one child: faster, less
	// isolated (--quick and the tests use it).
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
		groups := children(list, run, r.Batch)
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

// children returns the groups of rows run number run measures, one group
// per child process, in the order they start (see Runner).
func children(list []*Measurement, run int, batch bool) [][]string {
	turn := func(names []string) []string {
		if len(names) == 0 {
			return names
		}
		k := run % len(names)
		return append(append([]string(nil), names[k:]...), names[:k]...)
	}
	var all, ops, servers []string
	var groups [][]string
	for _, m := range list {
		all = append(all, m.Name)
		switch m.Kind {
		case Op:
			ops = append(ops, m.Name)
		case Server:
			servers = append(servers, m.Name)
		case Pending:
			groups = append(groups, []string{m.Name})
		}
	}
	if batch {
		return [][]string{turn(all)}
	}
	if len(ops) > 0 {
		groups = append([][]string{turn(ops)}, groups...)
	}
	if len(servers) > 0 {
		groups = append(groups, servers)
	}
	k := run % len(groups)
	return append(append([][]string(nil), groups[k:]...), groups[:k]...)
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
