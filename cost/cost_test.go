package cost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/cost"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func figure(t *testing.T, r *cost.Report, row, fig string) cost.Figure {
	t.Helper()
	rw, ok := r.Row(row)
	if !ok {
		t.Fatalf("no row %s", row)
	}
	f, ok := rw.Figure(fig)
	if !ok {
		t.Fatalf("row %s has no %s", row, fig)
	}
	return f
}

// TestEveryRowPresentAndSane checks every row of the catalogue is measured,
// its figures are ordered intervals of real values, and the figures the
// issue names relate as they must.
func TestEveryRowPresentAndSane(t *testing.T) {
	r := fullReport(t)
	if len(r.Rows) != len(cost.Names()) {
		t.Errorf("%d rows, want %d", len(r.Rows), len(cost.Names()))
	}
	for _, m := range cost.Measurements() {
		row, ok := r.Row(m.Name)
		if !ok {
			t.Errorf("no row %s", m.Name)
			continue
		}
		if len(row.Figures) == 0 {
			t.Errorf("%s: no figures", m.Name)
		}
		for _, f := range row.Figures {
			if len(f.Samples) != cost.MinCount {
				t.Errorf("%s %s: %d samples, want %d", m.Name, f.Name, len(f.Samples), cost.MinCount)
			}
			for _, v := range []float64{f.Low, f.Median, f.High} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Errorf("%s %s: %v", m.Name, f.Name, f)
				}
			}
			if !(f.Low <= f.Median && f.Median <= f.High) {
				t.Errorf("%s %s: median %v outside [%v, %v]", m.Name, f.Name, f.Median, f.Low, f.High)
			}
		}
		switch m.Kind {
		case cost.Op:
			if f := figure(t, r, m.Name, cost.NsPerOp); f.Median <= 0 {
				t.Errorf("%s: %v ns/op", m.Name, f.Median)
			}
		case cost.Pending:
			if f := figure(t, r, m.Name, cost.BytesPerPending); f.Median <= 0 {
				t.Errorf("%s: %v bytes per pending item", m.Name, f.Median)
			}
		case cost.Server:
			if f := figure(t, r, m.Name, cost.RequestsPerSecond); f.Median <= 0 {
				t.Errorf("%s: %v requests per second", m.Name, f.Median)
			}
			// The arguments handler is its own reference: exactly 1.
			ratio := figure(t, r, m.Name, cost.ThroughputRatio)
			if m.Name == "server-arguments" && (ratio.Low != 1 || ratio.High != 1) {
				t.Errorf("%s: throughput %v times its own", m.Name, ratio)
			} else if ratio.Median <= 0 {
				t.Errorf("%s: throughput %v times the arguments handler's", m.Name, ratio.Median)
			}
			p50, p99 := figure(t, r, m.Name, cost.LatencyP50Ns), figure(t, r, m.Name, cost.LatencyP99Ns)
			if p50.Median <= 0 || p99.Median < p50.Median {
				t.Errorf("%s: p50 %v, p99 %v", m.Name, p50.Median, p99.Median)
			}
		}
	}

	// A lookup 100 layers down walks 100 contexts: far more than 1.
	d1, d100 := figure(t, r, "value-depth-1", cost.NsPerOp), figure(t, r, "value-depth-100", cost.NsPerOp)
	if d100.Median <= d1.Median {
		t.Errorf("ctx.Value at depth 100: %v ns, not more than at depth 1: %v ns", d100.Median, d1.Median)
	}
	// A blocked goroutine's stack is at least the 2 KiB a goroutine
	// starts with. The runtime reserves stacks in 32 KiB spans, and
	// runtime/metrics counts whole spans: the first goroutines fill free
	// slots of spans already counted, and the last span may be part used,
	// so with n goroutines the figure can be off by up to two spans over n
	// (200 goroutines in 12 new spans read 1966 B each).
	const stackSpan = 32 << 10
	n := float64(mustRow(t, r, "pending-goroutine").PendingCount)
	if st := figure(t, r, "pending-goroutine", cost.StackBytesPerPending); st.Median < 2048-2*stackSpan/n {
		t.Errorf("pending goroutine stack: %v bytes for %v goroutines, want at least 2048 less two 32 KiB spans over them", st.Median, n)
	}
	if got, want := mustRow(t, r, "pending-http-request").PendingCount, min(testSettings.Pending, cost.MaxPendingConns); got != want {
		t.Errorf("pending-http-request: %d in flight, want %d", got, want)
	}

	// The argument baseline is the cheapest: it allocates nothing, and it
	// is faster than every row that allocates or walks more than one
	// layer, each ten times its cost or more (value-depth-10: 41 ns against
	// 3 ns). value-depth-1, two to three times the baseline, is left out:
	// under -race and load that margin is noise, and a verdict on it could
	// flip from one run to the next (depth 100 against depth 1 above
	// checks that a walk costs).
	base := figure(t, r, "argument", cost.NsPerOp)
	if a := figure(t, r, "argument", cost.AllocsPerOp); a.Median != 0 {
		t.Errorf("argument: %v allocs/op, want 0", a.Median)
	}
	for _, m := range cost.Measurements() {
		if m.Kind != cost.Op || m.Name == "argument" || m.Name == "value-depth-1" {
			continue
		}
		if ns := figure(t, r, m.Name, cost.NsPerOp); base.Median >= ns.Median {
			t.Errorf("argument baseline %v ns/op, not cheaper than %s: %v ns/op", base.Median, m.Name, ns.Median)
		}
	}
}

func mustRow(t *testing.T, r *cost.Report, name string) *cost.Row {
	t.Helper()
	row, ok := r.Row(name)
	if !ok {
		t.Fatalf("no row %s", name)
	}
	return row
}

// TestServerRatioWithoutArguments measures one handler alone: the
// arguments handler takes its turns unreported, so the ratio exists.
func TestServerRatioWithoutArguments(t *testing.T) {
	s, err := cost.Measure("server-middleware-5", testSettings)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Figures[cost.ThroughputRatio]; !(r > 0) || math.IsInf(r, 0) {
		t.Errorf("throughput %v times the arguments handler's", r)
	}
	if s.Figures[cost.RequestsPerSecond] <= 0 {
		t.Errorf("%v requests per second", s.Figures[cost.RequestsPerSecond])
	}
}

// TestJSONSchema pins the JSON document: its keys, their order and the
// seeds. Measured numbers and the platform are normalised.
func TestJSONSchema(t *testing.T) {
	r := fullReport(t)
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	got := normalise(t, buf.Bytes())
	golden := filepath.Join("testdata", "format-json.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("JSON differs from %s (go test -update to rewrite):\n%s", golden, got)
	}
}

// normalise replaces the measured numbers and the platform in a JSON
// report by placeholders, keeping every key in order.
func normalise(t *testing.T, doc []byte) []byte {
	t.Helper()
	var lines []string
	measured := false
	for _, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimSpace(line)
		key, _, hasKey := strings.Cut(trimmed, ":")
		switch {
		case hasKey && strings.HasSuffix(key, `"`) && strings.Contains(line, `"seeds"`):
			measured = false
		case hasKey && (key == `"median"` || key == `"low"` || key == `"high"`):
			line = line[:strings.Index(line, ":")+1] + " 0" + trailingComma(trimmed)
		case hasKey && (key == `"go_version"` || key == `"goos"` || key == `"goarch"` || key == `"gomaxprocs"`):
			line = line[:strings.Index(line, ":")+1] + ` "X"` + trailingComma(trimmed)
		case hasKey && key == `"samples"`:
			measured = true
		case measured && !strings.HasPrefix(trimmed, "]"):
			line = strings.Repeat(" ", len(line)-len(strings.TrimLeft(line, " "))) + "0" + trailingComma(trimmed)
		case measured:
			measured = false
		}
		lines = append(lines, line)
	}
	var check any
	out := []byte(strings.Join(lines, "\n"))
	if err := json.Unmarshal(out, &check); err != nil {
		t.Fatalf("normalised JSON does not parse: %v\n%s", err, out)
	}
	return out
}

func trailingComma(s string) string {
	if strings.HasSuffix(s, ",") {
		return ","
	}
	return ""
}

// TestLongDefaultRun measures every row with the default settings, each
// run of each row in a child of its own, and checks the timings order as
// they must without margins. It takes about a minute: CTXLEAK_LONG=1.
func TestLongDefaultRun(t *testing.T) {
	if os.Getenv("CTXLEAK_LONG") == "" {
		t.Skip("a minute of measurements: set CTXLEAK_LONG=1 to run")
	}
	r := &cost.Runner{Command: testCommand, Settings: cost.DefaultSettings, Count: cost.MinCount, Timeout: 5 * time.Minute}
	rep, err := r.Run(context.Background(), cost.Measurements())
	if err != nil {
		t.Fatal(err)
	}
	ns := func(name string) float64 { return figure(t, rep, name, cost.NsPerOp).Median }
	if !(ns("value-depth-1") < ns("value-depth-10") && ns("value-depth-10") < ns("value-depth-100")) {
		t.Errorf("ctx.Value at depth 1, 10, 100: %v, %v, %v ns", ns("value-depth-1"), ns("value-depth-10"), ns("value-depth-100"))
	}
	for _, m := range cost.Measurements() {
		if m.Kind == cost.Op && m.Name != "argument" && ns(m.Name) <= ns("argument") {
			t.Errorf("%s: %v ns/op, not more than the argument baseline's %v", m.Name, ns(m.Name), ns("argument"))
		}
	}
}
