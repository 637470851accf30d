// Command coststable checks that "ctxleak cost" figures are stable across
// runs: it reads two or more JSON reports (ctxleak cost --format json) of
// the same rows and, for every figure, checks that each run's median lies
// inside every other run's printed 95% interval. It prints each figure
// that does not, and exits 1 when any does not.
//
//	go run ./bench/coststable run1.json run2.json run3.json
//
// bench/cost-stability.sh makes the runs and calls it.
package main

import (
	"fmt"
	"os"

	"github.com/ctxleak/ctxleak/cost"
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
	figures, unstable := 0, 0
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
			if stable(got) {
				continue
			}
			unstable++
			fmt.Printf("unstable %s %s:", row.Name, fig.Name)
			for _, f := range got {
				fmt.Printf("  %.4g [%.4g, %.4g]", f.Median, f.Low, f.High)
			}
			fmt.Println()
		}
	}
	fmt.Printf("%d of %d figures stable across %d runs (each run's median inside every other run's interval)\n",
		figures-unstable, figures, len(runs))
	if unstable > 0 {
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
