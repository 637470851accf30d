// Command coststable checks that "ctxleak cost" figures are stable across
// runs: it reads two or more JSON reports (ctxleak cost --format json) of
// the same rows and judges every figure two ways.
//
//   - Stable: each run's median lies inside every other run's printed 95%
//     interval (the wording). Even on a machine whose runs differ
//     by nothing but sampling, a figure whose samples vary passes this
//     only now and then (about 55-70% of the time with three runs of 6 to
//     24 samples), so coststable also prints how many figures would pass
//     it on such a machine: for each figure, the share of 2000 trials that
//     pass when each run's samples are redrawn (with replacement) from all
//     runs' samples pooled, summed over the figures.
//   - Agree: the runs' intervals share a point. Runs that differ only by
//     sampling agree on over 99% of figures; a figure that does not moved
//     between runs beyond what its samples allow.
//
// It prints each figure that is not stable, marked when its runs do not
// agree either, and exits 1 when any figure's runs do not agree.
//
//	go run ./bench/coststable run1.json run2.json run3.json
//
// bench/cost-stability.sh makes the runs and calls it.
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/ctxleak/ctxleak/cost"
	"golang.org/x/perf/benchmath"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: coststable RUN.json RUN.json [RUN.json...]")
		os.Exit(2)
	}
	var runs []*cost.Report
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "coststable:", err)
			os.Exit(2)
		}
		r, err := cost.ReadJSON(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "coststable: %s: %v\n", name, err)
			os.Exit(2)
		}
		runs = append(runs, r)
	}
	rng := rand.New(rand.NewPCG(12, 12))
	figures, stableCount, agreeCount, expected := 0, 0, 0, 0.0
	for _, row := range runs[0].Rows {
		for _, fig := range row.Figures {
			got := make([]cost.Figure, len(runs))
			for i, r := range runs {
				rr, ok := r.Row(row.Name)
				if !ok {
					fmt.Fprintf(os.Stderr, "coststable: %s has no row %s\n", os.Args[1+i], row.Name)
					os.Exit(2)
				}
				if got[i], ok = rr.Figure(fig.Name); !ok {
					fmt.Fprintf(os.Stderr, "coststable: %s has no figure %s %s\n", os.Args[1+i], row.Name, fig.Name)
					os.Exit(2)
				}
			}
			figures++
			expected += samplingPass(rng, got)
			st, ag := stable(got), agree(got)
			if ag {
				agreeCount++
			}
			if st {
				stableCount++
				continue
			}
			fmt.Printf("unstable %s %s:", row.Name, fig.Name)
			for _, f := range got {
				fmt.Printf("  %.4g [%.4g, %.4g]", f.Median, f.Low, f.High)
			}
			if !ag {
				fmt.Print("  DISAGREE")
			}
			fmt.Println()
		}
	}
	fmt.Printf("%d of %d figures stable across %d runs (each run's median inside every other run's interval);\n",
		stableCount, figures, len(runs))
	fmt.Printf("  %.1f expected if the runs differed only by sampling (each run redrawn from the pooled samples)\n", expected)
	fmt.Printf("%d of %d figures agree across %d runs (the runs' intervals share a point)\n", agreeCount, figures, len(runs))
	if agreeCount < figures {
		os.Exit(1)
	}
}

// stable reports whether each figure's median lies in every other's interval.
func stable(figs []cost.Figure) bool {
	for i, a := range figs {
		for j, b := range figs {
			if i != j && (a.Median < b.Low || a.Median > b.High) {
				return false
			}
		}
	}
	return true
}

// agree reports whether the figures' intervals share a point.
func agree(figs []cost.Figure) bool {
	lo, hi := math.Inf(-1), math.Inf(1)
	for _, f := range figs {
		lo, hi = max(lo, f.Low), min(hi, f.High)
	}
	return lo <= hi
}

// samplingPass returns the share of trials in which figures made of
// samples redrawn from all of figs' samples pooled (each run keeping its
// sample count) are stable: how often the figure would be stable if the
// runs differed only by sampling.
func samplingPass(rng *rand.Rand, figs []cost.Figure) float64 {
	var pool []float64
	for _, f := range figs {
		pool = append(pool, f.Samples...)
	}
	const trials = 2000
	pass := 0
	drawn := make([]cost.Figure, len(figs))
	for range trials {
		for i, f := range figs {
			v := make([]float64, len(f.Samples))
			for j := range v {
				v[j] = pool[rng.IntN(len(pool))]
			}
			s := benchmath.AssumeNothing.Summary(benchmath.NewSample(v, &benchmath.DefaultThresholds), cost.Confidence)
			drawn[i] = cost.Figure{Median: s.Center, Low: s.Lo, High: s.Hi}
		}
		if stable(drawn) {
			pass++
		}
	}
	return float64(pass) / trials
}
