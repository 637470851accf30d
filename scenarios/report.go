package scenarios

import (
	"encoding/json"
	"io"
)

// Schemas of the JSON documents of "ctxleak run": ReportSchema for a
// Report, ListingSchema for a Listing.
const (
	ReportSchema  = "ctxleak.run/v1"
	ListingSchema = "ctxleak.run-list/v1"
)

// WriteJSON writes r as one indented JSON document that starts with
// "schema": ReportSchema. Lists are [] when empty, never null.
func (r *Report) WriteJSON(w io.Writer) error {
	doc := *r
	doc.Schema = ReportSchema
	doc.Scenarios = nonNil(doc.Scenarios)
	for i := range doc.Scenarios {
		res := &doc.Scenarios[i]
		res.Phases = nonNil(res.Phases)
		res.Globals = nonNil(res.Globals)
		for j := range res.Phases {
			p := &res.Phases[j]
			p.HolderDetail = nonNil(p.HolderDetail)
			p.PayloadAddrs = nonNil(p.PayloadAddrs)
			p.LeakedGoroutines = nonNil(p.LeakedGoroutines)
			for k := range p.HolderDetail {
				d := &p.HolderDetail[k]
				d.Roots = nonNil(d.Roots)
				d.Path = nonNil(d.Path)
				for l := range d.Roots {
					d.Roots[l].Goroutines = nonNil(d.Roots[l].Goroutines)
				}
			}
		}
	}
	return writeJSON(w, doc)
}

// Listing is the document "ctxleak run --list --format json" prints: the
// scenarios and their expected outcomes.
type Listing struct {
	// Schema is ListingSchema.
	Schema    string           `json:"schema"`
	Scenarios []ListedScenario `json:"scenarios"`
}

// ListedScenario is a scenario of a Listing.
type ListedScenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Mechanism   string `json:"mechanism"`
	Expect      string `json:"expect"`
	// ExpectLeakProfile says what Go 1.27's goroutineleak profile is
	// expected to report.
	ExpectLeakProfile string        `json:"expect_leak_profile"`
	Phases            []ListedPhase `json:"phases"`
}

// ListedPhase is a phase of a ListedScenario and its expected outcome
// (see Phase).
type ListedPhase struct {
	Name        string `json:"name"`
	ExpectAlive bool   `json:"expect_alive"`
	// ExpectGCCycles is the exact number of GC cycles the release is
	// expected to take, when that is checked.
	ExpectGCCycles int `json:"expect_release_gc_count,omitempty"`
	// ExpectHolder and ExpectVia are the regular expressions the holder
	// and the path to the payload must match at an alive phase.
	ExpectHolder string `json:"expect_holder,omitempty"`
	ExpectVia    string `json:"expect_via,omitempty"`
	// ExpectLeaked is the regular expression what the goroutineleak
	// profile reports must match, on Go 1.27 and later.
	ExpectLeaked string `json:"expect_leaked,omitempty"`
}

// NewListing lists the scenarios of list.
func NewListing(list []*Scenario) Listing {
	l := Listing{Schema: ListingSchema, Scenarios: []ListedScenario{}}
	for _, s := range list {
		ls := ListedScenario{Name: s.Name, Description: s.Description, Mechanism: s.Mechanism, Expect: s.Expect,
			ExpectLeakProfile: s.ExpectLeakProfile, Phases: []ListedPhase{}}
		for _, ph := range s.Phases {
			ls.Phases = append(ls.Phases, ListedPhase{Name: ph.Name, ExpectAlive: ph.Alive,
				ExpectGCCycles: ph.GCCycles, ExpectHolder: ph.Holder, ExpectVia: ph.Via, ExpectLeaked: ph.Leaked})
		}
		l.Scenarios = append(l.Scenarios, ls)
	}
	return l
}

// WriteJSON writes l as one indented JSON document.
func (l Listing) WriteJSON(w io.Writer) error { return writeJSON(w, l) }

// writeJSON writes v indented, with <, > and & as they are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// nonNil returns s, or an empty slice for nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
