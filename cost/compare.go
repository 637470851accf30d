package cost

import (
	"fmt"
	"io"

	"golang.org/x/perf/benchmath"
)

// gated are the figures Compare judges: the timings. Allocation and memory
// figures are printed, not gated.
var gated = []string{NsPerOp, RequestsPerSecond, LatencyP50Ns}

// Change is one timing figure of one row, compared with a base run.
type Change struct {
	Row, Figure string
	Base, New   Figure
	// P is the Mann-Whitney U test's p-value, Alpha its threshold.
	P, Alpha float64
	// Slower is benchstat's rule: the samples differ (P < Alpha) and the
	// new median is worse than the base's whole confidence interval.
	Slower bool
}

// Compare compares every timing figure of the rows cur and base share
// (benchmath.AssumeNothing, as benchstat does), in cur's row order. It
// returns an InputError when they share no row.
func Compare(base, cur *Report) ([]Change, error) {
	var out []Change
	for _, row := range cur.Rows {
		b, ok := base.Row(row.Name)
		if !ok || b.Kind != row.Kind {
			continue
		}
		for _, name := range gated {
			nf, ok1 := row.Figure(name)
			bf, ok2 := b.Figure(name)
			if !ok1 || !ok2 {
				continue
			}
			th := benchmath.DefaultThresholds
			c := benchmath.AssumeNothing.Compare(benchmath.NewSample(bf.Samples, &th), benchmath.NewSample(nf.Samples, &th))
			worse := nf.Median > bf.High
			if higherIsBetter[name] {
				worse = nf.Median < bf.Low
			}
			out = append(out, Change{Row: row.Name, Figure: name, Base: bf, New: nf,
				P: c.P, Alpha: c.Alpha, Slower: c.P < c.Alpha && worse})
		}
	}
	if len(out) == 0 {
		return nil, &InputError{Reason: "the base has no row in common with this run"}
	}
	return out, nil
}

// Slower returns the changes that are slower.
func Slower(changes []Change) []Change {
	var out []Change
	for _, c := range changes {
		if c.Slower {
			out = append(out, c)
		}
	}
	return out
}

// WriteCompareText writes changes as a table: base and new medians, the
// difference, the p-value, and "slower" where a change is.
func WriteCompareText(w io.Writer, changes []Change) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "vs base\tfigure\tbase\tnew\tdelta\t")
	for _, c := range changes {
		delta := "~"
		if c.P < c.Alpha && c.Base.Median != 0 {
			delta = fmt.Sprintf("%+.1f%%", 100*(c.New.Median-c.Base.Median)/c.Base.Median)
		}
		verdict := ""
		if c.Slower {
			verdict = "SLOWER"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s (p=%.3f n=%d+%d)\t%s\n", c.Row, unitLabel(c.Figure),
			formatValue(c.Figure, c.Base.Median), formatValue(c.Figure, c.New.Median),
			delta, c.P, len(c.Base.Samples), len(c.New.Samples), verdict)
	}
	return tw.flush()
}
