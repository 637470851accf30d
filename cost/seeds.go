package cost

import (
	"encoding/json"
)

// Seed is a figure measured elsewhere, on another runtime and machine,
// printed beside the Go row it compares with. Seeds are data: they are
// never measured by ctxleak.
type Seed struct {
	// Runtime and Version say where it was measured: "Node", "22".
	Runtime, Version string
	// What was measured, in that runtime's words.
	What string
	// Source says where the figure comes from.
	Source string
	// Figure is the figure's name (NsPerOp, ...); Low and High its value
	// or range.
	Figure    string
	Low, High float64
	// Row is the Go row it sits beside.
	Row string
	// Comparable says whether the two measure the same thing; Note says
	// how they differ.
	Comparable bool
	Note       string
}

// The sources of the seeds, as quoted in ctxleak issue 12 (which gives no
// primary links).
const (
	srcNodeALS  = "AsyncLocalStorage micro-benchmark, 200,000 iterations, median of 7 runs (quoted in ctxleak issue 12)"
	srcBunFix   = "Node vs Bun after Bun's AsyncLocalStorage fix (quoted in ctxleak issue 12)"
	srcBunHeap  = "Bun heap per pending operation with a store active, 100k ops (quoted in ctxleak issue 12); the fix is oven-sh/bun#41190, which drops a 32-byte tuple allocated per await"
	srcAutocan  = "autocannon, 10 connections, 10 s (quoted in ctxleak issue 12)"
	srcPyBench  = "Python 3.14 contextvars micro-benchmark (quoted in ctxleak issue 12)"
	noteMachine = "same operation, other machine: compare magnitudes"
)

// seeds are the figures of ctxleak issue 12.
var seeds = []Seed{
	{Runtime: "Node", Version: "22", What: "als.run() entering a context", Figure: NsPerOp, Low: 510, High: 510, Row: "with-value", Comparable: true, Source: srcNodeALS, Note: noteMachine},
	{Runtime: "Node", Version: "24", What: "als.run() entering a context", Figure: NsPerOp, Low: 259, High: 259, Row: "with-value", Comparable: true, Source: srcNodeALS, Note: noteMachine},
	{Runtime: "Node", Version: "26", What: "als.run() entering a context", Figure: NsPerOp, Low: 249, High: 249, Row: "with-value", Comparable: true, Source: srcNodeALS, Note: noteMachine},
	{Runtime: "Node", Version: "26", What: "als.run() (later engine change)", Figure: NsPerOp, Low: 410, High: 410, Row: "with-value", Comparable: true, Source: srcBunFix, Note: noteMachine},
	{Runtime: "Bun", Version: "after fix", What: "als.run()", Figure: NsPerOp, Low: 15.9, High: 15.9, Row: "with-value", Comparable: true, Source: srcBunFix, Note: noteMachine},
	{Runtime: "Node", Version: "26", What: "3 nested als.run()", Figure: NsPerOp, Low: 2833, High: 2833, Row: "with-value", Comparable: false, Source: srcBunFix, Note: "three nested contexts against one WithValue"},
	{Runtime: "Bun", Version: "after fix", What: "3 nested als.run()", Figure: NsPerOp, Low: 57.8, High: 57.8, Row: "with-value", Comparable: false, Source: srcBunFix, Note: "three nested contexts against one WithValue"},
	{Runtime: "Node", Version: "22-26", What: "three getStore() calls inside run()", Figure: NsPerOp, Low: 41, High: 78, Row: "value-depth-1", Comparable: false, Source: srcNodeALS, Note: "three reads against one ctx.Value"},
	{Runtime: "Node", Version: "22-26", What: "a handler with no context at all", Figure: NsPerOp, Low: 243, High: 274, Row: "argument", Comparable: false, Source: srcNodeALS, Note: "a whole handler call against passing one argument"},
	{Runtime: "Python", Version: "3.14", What: "ContextVar.get()", Figure: NsPerOp, Low: 15.7, High: 15.7, Row: "value-depth-1", Comparable: true, Source: srcPyBench, Note: noteMachine},
	{Runtime: "Python", Version: "3.14", What: "dict lookup", Figure: NsPerOp, Low: 13.6, High: 13.6, Row: "value-depth-1", Comparable: false, Source: srcPyBench, Note: "Python's own baseline for get()"},
	{Runtime: "Python", Version: "3.14", What: "threading.local attribute read", Figure: NsPerOp, Low: 35.4, High: 35.4, Row: "value-depth-1", Comparable: false, Source: srcPyBench, Note: "a thread-local, not a context"},
	{Runtime: "Python", Version: "3.14", What: "unset ContextVar read through try/except LookupError", Figure: NsPerOp, Low: 120, High: 120, Row: "value-missing-depth-100", Comparable: false, Source: srcPyBench, Note: "a miss in one variable against a miss below 100 layers"},
	{Runtime: "Python", Version: "3.14", What: "ContextVar.set() + reset()", Figure: NsPerOp, Low: 140, High: 140, Row: "with-value", Comparable: true, Source: srcPyBench, Note: noteMachine},
	{Runtime: "Python", Version: "3.14", What: "copy_context(), any number of variables", Figure: NsPerOp, Low: 26, High: 40, Row: "without-cancel", Comparable: false, Source: srcPyBench, Note: "a snapshot of all variables against a detached view of one context"},
	{Runtime: "Python", Version: "3.14", What: "create and run an asyncio task", Figure: NsPerOp, Low: 7400, High: 8800, Row: "go-with-ctx", Comparable: true, Source: srcPyBench, Note: noteMachine},
	{Runtime: "Bun", Version: "before fix", What: "await pending with a store active", Figure: BytesPerPending, Low: 203, High: 203, Row: "pending-goroutine", Comparable: false, Source: srcBunHeap, Note: "a pending promise against a blocked goroutine (whose stack is counted apart)"},
	{Runtime: "Bun", Version: "after fix", What: "await pending with a store active", Figure: BytesPerPending, Low: 171, High: 171, Row: "pending-goroutine", Comparable: false, Source: srcBunHeap, Note: "a pending promise against a blocked goroutine (whose stack is counted apart)"},
	{Runtime: "Bun", Version: "after fix", What: "setTimeout pending with a store active", Figure: BytesPerPending, Low: 163, High: 163, Row: "pending-time-after-func", Comparable: true, Source: srcBunHeap, Note: noteMachine},
	{Runtime: "Node", Version: "", What: "context passed through the request", Figure: RequestsPerSecond, Low: 6515, High: 6515, Row: "server-arguments", Comparable: true, Source: srcAutocan, Note: "same shape of test; other machine, and the load generator here shares the child's CPUs"},
	{Runtime: "Node", Version: "", What: "AsyncLocalStorage", Figure: RequestsPerSecond, Low: 6816, High: 6816, Row: "server-value-12", Comparable: true, Source: srcAutocan, Note: "same shape of test; other machine, and the load generator here shares the child's CPUs"},
	{Runtime: "Node", Version: "", What: "cls-hooked", Figure: RequestsPerSecond, Low: 3894, High: 3894, Row: "server-middleware-5", Comparable: false, Source: srcAutocan, Note: "async_hooks propagation against a middleware chain"},
}

// Seeds returns the seeds beside the report's rows, in row order.
func (r *Report) Seeds() []Seed {
	out := []Seed{}
	for _, row := range r.Rows {
		out = append(out, seedsOf(row.Name)...)
	}
	return out
}

// seedsOf returns the seeds beside the row called name.
func seedsOf(name string) []Seed {
	var out []Seed
	for _, s := range seeds {
		if s.Row == name {
			out = append(out, s)
		}
	}
	return out
}

// MarshalJSON writes a seed with its figure keyed by its name (so its unit
// is in the key): "ns_per_op": {"low": 41, "high": 78}.
func (s Seed) MarshalJSON() ([]byte, error) {
	type rng struct {
		Low  float64 `json:"low"`
		High float64 `json:"high"`
	}
	m := map[string]any{
		"runtime": s.Runtime, "version": s.Version, "what": s.What, "source": s.Source,
		"row": s.Row, "comparable": s.Comparable, "note": s.Note,
		"measured_elsewhere": true,
		s.Figure:             rng{s.Low, s.High},
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Seed) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	str := func(k string, p *string) { _ = json.Unmarshal(m[k], p) }
	str("runtime", &s.Runtime)
	str("version", &s.Version)
	str("what", &s.What)
	str("source", &s.Source)
	str("row", &s.Row)
	str("note", &s.Note)
	_ = json.Unmarshal(m["comparable"], &s.Comparable)
	for _, figs := range figuresOf {
		for _, f := range figs {
			if raw, ok := m[f]; ok {
				var r struct{ Low, High float64 }
				if err := json.Unmarshal(raw, &r); err != nil {
					return err
				}
				s.Figure, s.Low, s.High = f, r.Low, r.High
			}
		}
	}
	return nil
}
