package cost

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"
)

// Settings say how long and how big one measurement is, in one child.
type Settings struct {
	// OpTime is the benchmark time of one sample of an Op row
	// (testing.Benchmark's -test.benchtime).
	OpTime time.Duration
	// Pending is how many items a Pending row makes pending at once
	// (at most MaxPendingConns for pending-http-request).
	Pending int
	// LoadTime is how long one sample of a Server row drives the server.
	LoadTime time.Duration
}

// DefaultSettings and QuickSettings are the settings of "ctxleak cost" and
// "ctxleak cost --quick" (whose load time is per sample: the command
// splits its --duration between the runs).
var (
	DefaultSettings = Settings{OpTime: 30 * time.Millisecond, Pending: 100_000, LoadTime: 500 * time.Millisecond}
	QuickSettings   = Settings{OpTime: 2 * time.Millisecond, Pending: 5_000, LoadTime: 100 * time.Millisecond}
)

// Check reports settings that cannot be measured with.
func (s Settings) Check() error {
	switch {
	case s.OpTime <= 0:
		return errors.New("operation time must be positive")
	case s.Pending < 1:
		return errors.New("pending count must be at least 1")
	case s.LoadTime <= 0:
		return errors.New("load time must be positive")
	}
	return nil
}

// Sample is what one child process measured for one row: one value per
// figure.
type Sample struct {
	// Name is the row's.
	Name string `json:"name"`
	// Figures are keyed by figure name (NsPerOp, ...).
	Figures map[string]float64 `json:"figures"`
	// PendingCount is how many items were pending, for Pending rows.
	PendingCount int `json:"pending_count,omitempty"`
}

// Measure runs the measurement called name in this process and returns
// its sample. It is what a child process runs; RunChild wraps it.
func Measure(name string, s Settings) (*Sample, error) {
	out, err := measureAll([]string{name}, s)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// RunChild measures the named rows in this process and writes each Sample
// as one line of JSON to w, in the order of names: the child side of
// Runner. Op and Pending rows are measured one after the other, in that
// order; the Server rows all together, taking turns (see Runner).
func RunChild(w io.Writer, names []string, s Settings) error {
	samples, err := measureAll(names, s)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for _, smp := range samples {
		if err := enc.Encode(smp); err != nil {
			return err
		}
	}
	return nil
}

// measureAll measures the named rows, the Server rows together, and
// returns their samples in the order of names.
func measureAll(names []string, s Settings) ([]*Sample, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	list := make([]*Measurement, len(names))
	for i, name := range names {
		m, ok := Lookup(name)
		if !ok {
			return nil, &UnknownError{Name: name}
		}
		list[i] = m
	}
	out := make([]*Sample, len(names))
	var servers []*Measurement
	var at []int
	for i, m := range list {
		out[i] = &Sample{Name: m.Name}
		var err error
		switch m.Kind {
		case Op:
			out[i].Figures, err = measureOp(m, s.OpTime)
		case Pending:
			n := s.Pending
			if m.conns && n > MaxPendingConns {
				n = MaxPendingConns
			}
			out[i].PendingCount = n
			out[i].Figures, err = measurePending(m, n)
		case Server:
			servers, at = append(servers, m), append(at, i)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	if len(servers) > 0 {
		if !slices.ContainsFunc(servers, isArguments) {
			// The ratios need the arguments handler: it takes its
			// turns, unreported.
			args, _ := Lookup(argumentsServer)
			servers = append(servers, args)
		}
		figs, err := measureServers(servers, s.LoadTime)
		if err != nil {
			return nil, err
		}
		for j, i := range at {
			out[i].Figures = figs[j]
		}
	}
	return out, nil
}

// measureOp benchmarks m's operation with testing.Benchmark for about d.
func measureOp(m *Measurement, d time.Duration) (map[string]float64, error) {
	testing.Init()
	if err := flag.Set("test.benchtime", d.String()); err != nil {
		return nil, err
	}
	r := testing.Benchmark(func(b *testing.B) {
		op := m.op()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			op()
		}
	})
	if r.N == 0 {
		return nil, errors.New("the benchmark did not run")
	}
	return map[string]float64{
		NsPerOp:     float64(r.T.Nanoseconds()) / float64(r.N),
		BytesPerOp:  float64(r.AllocedBytesPerOp()),
		AllocsPerOp: float64(r.AllocsPerOp()),
	}, nil
}
