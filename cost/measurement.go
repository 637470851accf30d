package cost

import (
	"fmt"
	"net/http"
	"sort"
)

// Kind is what a measurement measures, and so which figures its rows have.
type Kind string

// The kinds of measurement.
const (
	// Op is the time and allocations of one operation (testing.Benchmark).
	Op Kind = "op"
	// Pending is the memory per pending operation (runtime/metrics).
	Pending Kind = "pending"
	// Server is the throughput and latency of a net/http server under load.
	Server Kind = "server"
)

// The figures, named as in the JSON output: the unit is in the name.
const (
	NsPerOp              = "ns_per_op"
	BytesPerOp           = "bytes_per_op"
	AllocsPerOp          = "allocs_per_op"
	BytesPerPending      = "bytes_per_pending"
	StackBytesPerPending = "stack_bytes_per_pending"
	RequestsPerSecond    = "requests_per_second"
	// ThroughputRatio is a Server row's requests per second over those of
	// the arguments handler, measured in the same child taking turns with
	// it: what the machine's pace does to both cancels out.
	ThroughputRatio = "throughput_vs_arguments_ratio"
	LatencyP50Ns    = "latency_p50_ns"
	LatencyP99Ns    = "latency_p99_ns"
)

// figuresOf lists the figures of each kind, in the order they are printed.
var figuresOf = map[Kind][]string{
	Op:      {NsPerOp, BytesPerOp, AllocsPerOp},
	Pending: {BytesPerPending, StackBytesPerPending},
	Server:  {RequestsPerSecond, ThroughputRatio, LatencyP50Ns, LatencyP99Ns},
}

// higherIsBetter lists the figures where more is better; for every other
// figure less is better.
var higherIsBetter = map[string]bool{RequestsPerSecond: true, ThroughputRatio: true}

// Measurement is one row of the table: a named measurement run in a child
// process.
type Measurement struct {
	// Name is the row's name, as given on the command line.
	Name string
	// Kind says what is measured.
	Kind Kind
	// Description says what one operation or pending item is.
	Description string

	op      func() func()                                 // Op: setup, returning the operation
	pending func(n int) (start func() error, undo func()) // Pending: holders of n items, and what makes them pending
	server  func() http.Handler                           // Server: the handler under load
	// conns is set for the pending row whose items are connections: its
	// count is capped at MaxPendingConns.
	conns bool
}

// Measurements returns the catalogue, in the order rows are printed.
func Measurements() []*Measurement { return append([]*Measurement(nil), catalogue...) }

// Names returns the names of the measurements, in catalogue order.
func Names() []string {
	var names []string
	for _, m := range catalogue {
		names = append(names, m.Name)
	}
	return names
}

// Lookup returns the measurement called name.
func Lookup(name string) (*Measurement, bool) {
	for _, m := range catalogue {
		if m.Name == name {
			return m, true
		}
	}
	return nil, false
}

// UnknownError is returned for a measurement name not in the catalogue.
type UnknownError struct{ Name string }

// Error names the unknown measurement and the known ones.
func (e *UnknownError) Error() string {
	names := Names()
	sort.Strings(names)
	return fmt.Sprintf("unknown measurement %q (known: %v)", e.Name, names)
}

// Select returns the measurements called names, in catalogue order, or all
// of them when names is empty.
func Select(names []string) ([]*Measurement, error) {
	if len(names) == 0 {
		return Measurements(), nil
	}
	want := map[string]bool{}
	for _, n := range names {
		if _, ok := Lookup(n); !ok {
			return nil, &UnknownError{Name: n}
		}
		want[n] = true
	}
	var list []*Measurement
	for _, m := range catalogue {
		if want[m.Name] {
			list = append(list, m)
		}
	}
	return list, nil
}
