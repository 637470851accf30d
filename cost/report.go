package cost

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"golang.org/x/perf/benchmath"
)

// Schema names the JSON document WriteJSON writes.
const Schema = "ctxleak.cost/v2"

// Confidence is the confidence level of every interval.
const Confidence = 0.95

// Report is the result of a run: one Row per measurement.
type Report struct {
	// GoVersion, GOOS, GOARCH and GOMAXPROCS describe the children.
	GoVersion  string
	GOOS       string
	GOARCH     string
	GOMAXPROCS int
	// Count is how many samples each row has.
	Count int
	// Settings are the children's settings.
	Settings Settings
	// Rows are in catalogue order.
	Rows []Row
}

// Row is one measurement's figures over its samples.
type Row struct {
	// Name, Kind and Description are the measurement's.
	Name        string
	Kind        Kind
	Description string
	// PendingCount is how many items were pending at once (Pending rows).
	PendingCount int
	// Figures are in the order of the kind's figures.
	Figures []Figure
}

// Figure is one quantity of a row: its samples, median and the 95%
// confidence interval of the median (benchmath.AssumeNothing).
type Figure struct {
	// Name is the figure's name, its unit included: NsPerOp, ...
	Name              string
	Median, Low, High float64
	// Samples are the measured values, one per run, in ascending order.
	Samples []float64
}

// Figure returns the row's figure called name.
func (r *Row) Figure(name string) (Figure, bool) {
	for _, f := range r.Figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// Row returns the report's row called name.
func (r *Report) Row(name string) (*Row, bool) {
	for i := range r.Rows {
		if r.Rows[i].Name == name {
			return &r.Rows[i], true
		}
	}
	return nil, false
}

// newRow summarises the samples of m.
func newRow(m *Measurement, samples []*Sample) Row {
	row := Row{Name: m.Name, Kind: m.Kind, Description: m.Description}
	for _, name := range figuresOf[m.Kind] {
		var values []float64
		for _, s := range samples {
			values = append(values, s.Figures[name])
			row.PendingCount = s.PendingCount
		}
		row.Figures = append(row.Figures, summarise(name, values))
	}
	return row
}

// summarise computes the median of values and its confidence interval.
func summarise(name string, values []float64) Figure {
	s := benchmath.NewSample(values, &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	return Figure{Name: name, Median: sum.Center, Low: sum.Lo, High: sum.Hi, Samples: s.Values}
}

// The JSON form of a report. Figures are keyed by their names, which carry
// their units.
type (
	reportJSON struct {
		Schema          string    `json:"schema"`
		GoVersion       string    `json:"go_version"`
		GOOS            string    `json:"goos"`
		GOARCH          string    `json:"goarch"`
		GOMAXPROCS      int       `json:"gomaxprocs"`
		RunCount        int       `json:"run_count"`
		OpTimeMs        int64     `json:"op_time_ms"`
		PendingCount    int       `json:"pending_count"`
		LoadTimeMs      int64     `json:"load_time_ms"`
		ConnectionCount int       `json:"connection_count"`
		Rows            []rowJSON `json:"rows"`
		Seeds           []Seed    `json:"seeds"`
	}
	rowJSON struct {
		Name                 string        `json:"name"`
		Kind                 Kind          `json:"kind"`
		Description          string        `json:"description"`
		PendingCount         int           `json:"pending_count,omitempty"`
		NsPerOp              *intervalJSON `json:"ns_per_op,omitempty"`
		BytesPerOp           *intervalJSON `json:"bytes_per_op,omitempty"`
		AllocsPerOp          *intervalJSON `json:"allocs_per_op,omitempty"`
		BytesPerPending      *intervalJSON `json:"bytes_per_pending,omitempty"`
		StackBytesPerPending *intervalJSON `json:"stack_bytes_per_pending,omitempty"`
		RequestsPerSecond    *intervalJSON `json:"requests_per_second,omitempty"`
		ThroughputRatio      *intervalJSON `json:"throughput_vs_arguments_ratio,omitempty"`
		LatencyP50Ns         *intervalJSON `json:"latency_p50_ns,omitempty"`
		LatencyP99Ns         *intervalJSON `json:"latency_p99_ns,omitempty"`
	}
	intervalJSON struct {
		Median  float64   `json:"median"`
		Low     float64   `json:"low"`
		High    float64   `json:"high"`
		Samples []float64 `json:"samples"`
	}
)

// field returns the pointer to the figure called name in r.
func (r *rowJSON) field(name string) **intervalJSON {
	switch name {
	case NsPerOp:
		return &r.NsPerOp
	case BytesPerOp:
		return &r.BytesPerOp
	case AllocsPerOp:
		return &r.AllocsPerOp
	case BytesPerPending:
		return &r.BytesPerPending
	case StackBytesPerPending:
		return &r.StackBytesPerPending
	case RequestsPerSecond:
		return &r.RequestsPerSecond
	case LatencyP50Ns:
		return &r.LatencyP50Ns
	case ThroughputRatio:
		return &r.ThroughputRatio
	case LatencyP99Ns:
		return &r.LatencyP99Ns
	}
	return nil
}

// WriteJSON writes the report as one JSON document (schema
// "ctxleak.cost/v2"), with the seeds' figures of its rows.
func (r *Report) WriteJSON(w io.Writer) error {
	doc := reportJSON{
		Schema: Schema, GoVersion: r.GoVersion, GOOS: r.GOOS, GOARCH: r.GOARCH,
		GOMAXPROCS: r.GOMAXPROCS, RunCount: r.Count,
		OpTimeMs: r.Settings.OpTime.Milliseconds(), PendingCount: r.Settings.Pending,
		LoadTimeMs: r.Settings.LoadTime.Milliseconds(), ConnectionCount: Connections,
		Rows: []rowJSON{}, Seeds: r.Seeds(),
	}
	for _, row := range r.Rows {
		rj := rowJSON{Name: row.Name, Kind: row.Kind, Description: row.Description, PendingCount: row.PendingCount}
		for _, f := range row.Figures {
			p := rj.field(f.Name)
			if p == nil {
				return fmt.Errorf("row %s: unknown figure %q", row.Name, f.Name)
			}
			*p = &intervalJSON{Median: f.Median, Low: f.Low, High: f.High, Samples: append([]float64{}, f.Samples...)}
		}
		doc.Rows = append(doc.Rows, rj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// InputError reports a JSON document ReadJSON cannot use.
type InputError struct{ Reason string }

// Error returns the reason.
func (e *InputError) Error() string { return e.Reason }

// ReadJSON reads a report written by WriteJSON. Its errors are InputErrors.
func ReadJSON(rd io.Reader) (*Report, error) {
	var doc reportJSON
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&doc); err != nil {
		return nil, &InputError{Reason: fmt.Sprintf("not a cost report: %v", err)}
	}
	if doc.Schema != Schema {
		return nil, &InputError{Reason: fmt.Sprintf("schema %q, want %q", doc.Schema, Schema)}
	}
	r := &Report{GoVersion: doc.GoVersion, GOOS: doc.GOOS, GOARCH: doc.GOARCH, GOMAXPROCS: doc.GOMAXPROCS, Count: doc.RunCount}
	r.Settings = Settings{OpTime: time.Duration(doc.OpTimeMs) * time.Millisecond, Pending: doc.PendingCount,
		LoadTime: time.Duration(doc.LoadTimeMs) * time.Millisecond}
	for _, rj := range doc.Rows {
		if rj.Name == "" {
			return nil, &InputError{Reason: "a row has no name"}
		}
		figs, ok := figuresOf[rj.Kind]
		if !ok {
			return nil, &InputError{Reason: fmt.Sprintf("row %s: unknown kind %q", rj.Name, rj.Kind)}
		}
		row := Row{Name: rj.Name, Kind: rj.Kind, Description: rj.Description, PendingCount: rj.PendingCount}
		for _, name := range figs {
			iv := *rj.field(name)
			if iv == nil {
				return nil, &InputError{Reason: fmt.Sprintf("row %s: no %s", rj.Name, name)}
			}
			if len(iv.Samples) == 0 {
				return nil, &InputError{Reason: fmt.Sprintf("row %s: %s has no samples", rj.Name, name)}
			}
			s := slices.Sorted(slices.Values(iv.Samples))
			row.Figures = append(row.Figures, Figure{Name: name, Median: iv.Median, Low: iv.Low, High: iv.High, Samples: s})
		}
		r.Rows = append(r.Rows, row)
	}
	if len(r.Rows) == 0 {
		return nil, &InputError{Reason: "no rows"}
	}
	return r, nil
}
