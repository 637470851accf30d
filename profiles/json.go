package profiles

import (
	"encoding/json"
	"io"
)

// JSONSchema names the layout of the document WriteJSON writes; it changes
// only when a key is removed or changes meaning.
const JSONSchema = "ctxleak.analyze/v2"

// reportJSON is the JSON document: one object, stable key order, every
// section present (null when it does not apply), lists never null.
type reportJSON struct {
	Schema     string          `json:"schema"`
	Inputs     []Input         `json:"inputs"`
	Options    Settings        `json:"options"`
	Heap       *heapJSON       `json:"heap,omitempty"`
	Goroutines *goroutinesJSON `json:"goroutines,omitempty"`
	Leaked     *goroutinesJSON `json:"leaked_goroutines,omitempty"`
	Gates      []gateJSON      `json:"gates"`
	Result     string          `json:"result"` // "pass" or "fail"
	Reasons    []string        `json:"reasons"`
}

// heapJSON is the heap report with only the top sites.
type heapJSON struct {
	*HeapReport
	Sites     []AllocSite `json:"sites"`
	SiteCount int         `json:"site_count"`
}

// goroutinesJSON is the goroutine report with only the top groups.
type goroutinesJSON struct {
	*GoroutineReport
	Groups     []GoroutineGroup `json:"groups"`
	GroupCount int              `json:"group_count"`
}

// gateJSON is one gate's outcome: its limit and value are bytes for the
// growth and retained gates, and a count of goroutines for the goroutine
// gates.
type gateJSON struct {
	Gate       string `json:"gate"`
	LimitBytes *int64 `json:"limit_bytes,omitempty"`
	ValueBytes *int64 `json:"value_bytes,omitempty"`
	LimitCount *int64 `json:"limit_count,omitempty"`
	ValueCount *int64 `json:"value_count,omitempty"`
	Tripped    bool   `json:"tripped"`
	Reason     string `json:"reason"`
	Setting    string `json:"setting"`
}

// WriteJSON writes the report as one indented JSON document whose
// "schema" is JSONSchema. Sites and goroutine groups are cut to
// Settings.Top; site_count and group_count say how many there are in all.
func (r *Report) WriteJSON(w io.Writer) error {
	s := r.Settings
	s.Helpers = nonNil(s.Helpers)
	s.RequestPaths = r.Settings.requestPaths()
	s.RequestLabels = r.Settings.requestLabels()
	doc := reportJSON{
		Schema:  JSONSchema,
		Inputs:  nonNil(r.Inputs),
		Options: s,
		Gates:   []gateJSON{},
		Result:  "pass",
		Reasons: r.Reasons(),
	}
	if r.Heap != nil {
		doc.Heap = &heapJSON{HeapReport: r.Heap, Sites: nonNil(r.topSites()), SiteCount: len(r.Heap.Sites)}
	}
	if g := r.Goroutines; g != nil {
		doc.Goroutines = &goroutinesJSON{GoroutineReport: g,
			Groups: nonNil(topN(g.Groups, s.Top)), GroupCount: len(g.Groups)}
	}
	if g := r.Leaked; g != nil {
		doc.Leaked = &goroutinesJSON{GoroutineReport: g,
			Groups: nonNil(topN(g.Groups, s.Top)), GroupCount: len(g.Groups)}
	}
	for _, g := range r.Gates {
		limit, value := g.Limit, g.Value
		gj := gateJSON{Gate: g.Gate, Tripped: g.Tripped, Reason: g.Reason, Setting: r.Setting(g)}
		if IsCountGate(g.Gate) {
			gj.LimitCount, gj.ValueCount = &limit, &value
		} else {
			gj.LimitBytes, gj.ValueBytes = &limit, &value
		}
		doc.Gates = append(doc.Gates, gj)
	}
	if len(doc.Reasons) > 0 {
		doc.Result = "fail"
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
