package cost_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/cost"
)

// roundTrip writes r as JSON and reads it back, as --base does.
func roundTrip(t *testing.T, r *cost.Report) *cost.Report {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := cost.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// shifted returns a copy of r whose every figure is moved, by a factor
// of its own, clear of its samples' whole range: all the timings ten times
// faster than r's fastest sample when faster is set, ten times slower than
// its slowest otherwise (time figures scaled, request rates inversely).
func shifted(r *cost.Report, faster bool) *cost.Report {
	out := *r
	out.Rows = nil
	for _, row := range r.Rows {
		row.Figures = append([]cost.Figure(nil), row.Figures...)
		for i, f := range row.Figures {
			lo, hi := f.Samples[0], f.Samples[len(f.Samples)-1]
			if lo <= 0 {
				continue // not a timing: never gated
			}
			k := 10 * hi / lo
			if faster == (f.Name != cost.RequestsPerSecond) {
				k = 1 / k
			}
			f.Samples = append([]float64(nil), f.Samples...)
			for j := range f.Samples {
				f.Samples[j] *= k
			}
			slices.Sort(f.Samples)
			f.Median, f.Low, f.High = f.Median*k, f.Low*k, f.High*k
			if f.Low > f.High {
				f.Low, f.High = f.High, f.Low
			}
			row.Figures[i] = f
		}
		out.Rows = append(out.Rows, row)
	}
	return &out
}

// TestCompareGates checks benchstat's rule on a real run: against itself
// nothing is slower; against a base faster than its fastest sample every
// timing is; against a base slower than its slowest none is.
func TestCompareGates(t *testing.T) {
	cur := fullReport(t)
	base := roundTrip(t, cur)

	changes, err := cost.Compare(base, cur)
	if err != nil {
		t.Fatal(err)
	}
	if s := cost.Slower(changes); len(s) != 0 {
		t.Errorf("against itself, %d figures slower: %+v", len(s), s[0])
	}
	wantGated := 0
	for _, row := range cur.Rows {
		if row.Kind == cost.Server {
			wantGated += 2
		} else if row.Kind == cost.Op {
			wantGated++
		}
	}
	if len(changes) != wantGated {
		t.Errorf("%d figures compared, want %d", len(changes), wantGated)
	}

	changes, err = cost.Compare(shifted(base, true), cur)
	if err != nil {
		t.Fatal(err)
	}
	if s := cost.Slower(changes); len(s) != len(changes) {
		t.Errorf("against a faster base, %d of %d figures slower", len(s), len(changes))
	}
	var buf bytes.Buffer
	if err := cost.WriteCompareText(&buf, changes); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "SLOWER") {
		t.Errorf("comparison text says nothing is slower:\n%s", &buf)
	}
	noTrailingSpaces(t, buf.String())

	changes, err = cost.Compare(shifted(base, false), cur)
	if err != nil {
		t.Fatal(err)
	}
	if s := cost.Slower(changes); len(s) != 0 {
		t.Errorf("against a slower base, %d figures slower", len(s))
	}
}

// TestReadJSONRejects checks what --base turns into exit status 2.
func TestReadJSONRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"not JSON":     "ctxleak cost: go1.26",
		"other schema": `{"schema": "ctxleak.run/v1", "rows": []}`,
		"no rows":      `{"schema": "ctxleak.cost/v1", "rows": []}`,
		"no samples":   `{"schema": "ctxleak.cost/v1", "rows": [{"name": "argument", "kind": "op", "ns_per_op": {"median": 1, "low": 1, "high": 1, "samples": []}, "bytes_per_op": {"samples": [0]}, "allocs_per_op": {"samples": [0]}}]}`,
		"unknown kind": `{"schema": "ctxleak.cost/v1", "rows": [{"name": "argument", "kind": "lap"}]}`,
	} {
		_, err := cost.ReadJSON(strings.NewReader(doc))
		var ie *cost.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: error %v, want an InputError", name, err)
		}
	}
	// A base that shares no row with the run cannot gate it.
	cur := fullReport(t)
	other := *cur
	other.Rows = nil
	for _, row := range cur.Rows {
		row.Name = "renamed-" + row.Name
		other.Rows = append(other.Rows, row)
	}
	var ie *cost.InputError
	if _, err := cost.Compare(&other, cur); !errors.As(err, &ie) {
		t.Errorf("no rows in common: error %v, want an InputError", err)
	}
}

// TestTextShowsSeeds checks the text output puts the figures measured
// elsewhere beside the rows they compare with, and says whether they are
// comparable.
func TestTextShowsSeeds(t *testing.T) {
	var buf bytes.Buffer
	if err := fullReport(t).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"GOMAXPROCS", "elsewhere: Node 24", "elsewhere: Bun after fix", "elsewhere: Python 3.14",
		"not comparable", "; comparable", "pending-goroutine", "server-middleware-5"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	// The Node als.run line sits right under the with-value row's block.
	wv := strings.Index(out, "\nwith-value ")
	node := strings.Index(out, "elsewhere: Node 24")
	next := strings.Index(out, "\nvalue-depth-1 ")
	if !(wv >= 0 && wv < node && node < next) {
		t.Errorf("Node 24's als.run is not beside with-value:\n%s", out)
	}
	noTrailingSpaces(t, out)
}

// noTrailingSpaces checks that no line of out ends in spaces.
func noTrailingSpaces(t *testing.T, out string) {
	t.Helper()
	for line := range strings.Lines(out) {
		if l := strings.TrimSuffix(line, "\n"); strings.HasSuffix(l, " ") {
			t.Errorf("line ends in spaces: %q", l)
		}
	}
}
