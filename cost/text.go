package cost

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// kindTitles head each kind's table.
var kindTitles = map[Kind]string{
	Op:      "time and allocations per operation",
	Pending: "memory per pending operation (runtime/metrics after GC; stacks apart from heap)",
	Server:  "net/http server on 127.0.0.1 under load (vegeta)",
}

// unitLabel is a figure's column heading.
func unitLabel(fig string) string {
	switch fig {
	case NsPerOp:
		return "time/op"
	case BytesPerOp:
		return "B/op"
	case AllocsPerOp:
		return "allocs/op"
	case BytesPerPending:
		return "heap/pending"
	case StackBytesPerPending:
		return "stack/pending"
	case RequestsPerSecond:
		return "req/s"
	case ThroughputRatio:
		return "vs arguments"
	case LatencyP50Ns:
		return "p50"
	case LatencyP99Ns:
		return "p99"
	}
	return fig
}

// formatValue formats v, a value of the figure fig, with its unit.
func formatValue(fig string, v float64) string {
	switch fig {
	case NsPerOp, LatencyP50Ns, LatencyP99Ns:
		return formatNs(v)
	case BytesPerOp:
		return trim(v) + " B"
	case BytesPerPending, StackBytesPerPending:
		return fmt.Sprintf("%.1f B", v) // measured to a tenth of a byte
	case AllocsPerOp:
		return trim(v)
	case RequestsPerSecond:
		return fmt.Sprintf("%.0f", v)
	case ThroughputRatio:
		return trim(v) + "×"
	}
	return trim(v)
}

// formatPublished formats v, a published value of the figure fig, with
// no more digits than it was published with (a seed's bytes are whole).
func formatPublished(fig string, v float64) string {
	if fig == BytesPerPending || fig == StackBytesPerPending {
		return trim(v) + " B"
	}
	return formatValue(fig, v)
}

// formatNs formats nanoseconds with a unit that keeps 3 or 4 digits.
func formatNs(v float64) string {
	switch {
	case v >= 1e6:
		return trim(v/1e6) + " ms"
	case v >= 1e4:
		return trim(v/1e3) + " µs"
	}
	return trim(v) + " ns"
}

// trim formats v with 3 significant digits, no trailing zeros.
func trim(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	if digits < 0 {
		digits = 0
	}
	s := fmt.Sprintf("%.*f", digits, v)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// formatFigure formats a figure as "median (low–high)"; an exact figure
// (all samples equal) has no interval.
func formatFigure(f Figure) string {
	m := formatValue(f.Name, f.Median)
	if f.Low == f.High {
		return m
	}
	return fmt.Sprintf("%s (%s–%s)", m, trimUnit(formatValue(f.Name, f.Low), m), formatValue(f.Name, f.High))
}

// trimUnit drops lo's unit when it is the same as ref's.
func trimUnit(lo, ref string) string {
	li, ri := strings.LastIndexByte(lo, ' '), strings.LastIndexByte(ref, ' ')
	if li > 0 && ri > 0 && lo[li:] == ref[ri:] {
		return lo[:li]
	}
	return lo
}

// table is a tabwriter whose lines end in no spaces: cells that end in a
// tab, to align what follows them on other lines, pad every line.
type table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	w   io.Writer
}

// newTable returns a table that writes to w when flushed.
func newTable(w io.Writer) *table {
	t := &table{w: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// flush writes the table's lines to its writer, without their trailing
// spaces.
func (t *table) flush() error {
	if err := t.Flush(); err != nil {
		return err
	}
	for line := range strings.Lines(t.buf.String()) {
		if _, err := fmt.Fprintln(t.w, strings.TrimRight(line, " \n")); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}

// WriteText writes the report as tables, one per kind, each row followed
// by the figures measured elsewhere that it compares with.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "ctxleak cost: %s %s/%s, GOMAXPROCS %d; %d runs of each row, interleaved, each sample from another child process\n",
		r.GoVersion, r.GOOS, r.GOARCH, r.GOMAXPROCS, r.Count)
	fmt.Fprintf(w, "median (95%% confidence interval of the median); \"elsewhere\" lines are other runtimes' published figures, not measured here\n")
	for _, kind := range []Kind{Op, Pending, Server} {
		var rows []Row
		for _, row := range r.Rows {
			if row.Kind == kind {
				rows = append(rows, row)
			}
		}
		if len(rows) == 0 {
			continue
		}
		title := kindTitles[kind]
		switch kind {
		case Op:
			title += fmt.Sprintf(", %v per sample", r.Settings.OpTime)
		case Pending:
			title += fmt.Sprintf(", %d pending at once", r.Settings.Pending)
		case Server:
			title += fmt.Sprintf(", %d connections, %v per sample", Connections, r.Settings.LoadTime)
		}
		fmt.Fprintf(w, "\n%s\n", title)
		tw := newTable(w)
		head := []string{""}
		for _, f := range figuresOf[kind] {
			head = append(head, unitLabel(f))
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for _, row := range rows {
			cells := []string{row.Name}
			if row.PendingCount != 0 && row.PendingCount != r.Settings.Pending {
				cells[0] += fmt.Sprintf(" (%d)", row.PendingCount)
			}
			for _, f := range row.Figures {
				cells = append(cells, formatFigure(f))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
			for _, s := range seedsOf(row.Name) {
				cells := []string{"  elsewhere: " + s.Runtime + " " + s.Version}
				for _, f := range figuresOf[kind] {
					if f != s.Figure {
						cells = append(cells, "")
						continue
					}
					v := formatPublished(f, s.Low)
					if s.High != s.Low {
						v = trimUnit(v, formatPublished(f, s.High)) + "–" + formatPublished(f, s.High)
					}
					cells = append(cells, v)
				}
				comp := "comparable"
				if !s.Comparable {
					comp = "not comparable"
				}
				cells = append(cells, s.What+"; "+comp+": "+s.Note)
				fmt.Fprintln(tw, strings.Join(cells, "\t"))
			}
		}
		if err := tw.flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nsources of the elsewhere lines:")
	seen := map[string]bool{}
	for _, s := range r.Seeds() {
		if !seen[s.Source] {
			seen[s.Source] = true
			fmt.Fprintf(w, "  %s: %s\n", s.Runtime, s.Source)
		}
	}
	return nil
}
