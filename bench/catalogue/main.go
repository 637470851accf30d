// Command catalogue times "ctxleak run" on the whole catalogue, checks the
// targets of issue 2 and, over several runs, that every verdict is stable,
// the holders named at each alive phase included.
//
//	go run ./bench/catalogue                    # one run, 50 MiB payload
//	go run ./bench/catalogue -runs 20           # the 20/20 verdict check
//	go run ./bench/catalogue -payload 1GiB      # a large payload
//	go run ./bench/catalogue -holders=false     # without heap dumps, to compare
//	go run ./bench/catalogue -ldflags '-s -w'   # stripped, as go run builds it
//
// Targets: each run of the default catalogue takes at most -max-wall (15 s)
// and no child's peak RSS exceeds 2 x payload + 64 MiB. It exits 1 when a
// target is missed or a verdict is not as expected in any run. It lists the
// holders each alive phase was found to have (goroutine ids left out), with
// how many runs found each.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/scenarios"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "catalogue:", err)
		os.Exit(1)
	}
}

func run() error {
	var payload bytesize.Size
	flag.Var(bytesize.NewFlag(&payload, scenarios.DefaultPayloadBytes), "payload", "payload size passed to ctxleak run")
	runs := flag.Int("runs", 1, "how many times to run the catalogue")
	tasks := flag.Int("tasks", scenarios.DefaultTasks, "tasks passed to ctxleak run")
	maxWall := flag.Duration("max-wall", 15*time.Second, "target: wall time of one run (0: no target)")
	bin := flag.String("bin", "", "ctxleak binary to time (default: build ./cmd/ctxleak)")
	holders := flag.Bool("holders", true, "name the holders of alive payloads (ctxleak run --holders)")
	ldflags := flag.String("ldflags", "", "linker flags for building ctxleak: '-s -w' strips it as go run does")
	flag.Parse()

	if *bin == "" {
		dir, err := os.MkdirTemp("", "ctxleak-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*bin = filepath.Join(dir, "ctxleak")
		build := exec.Command("go", "build", "-ldflags="+*ldflags, "-o", *bin, "./cmd/ctxleak")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	rssLimit := 2*int64(payload) + 64<<20

	type stats struct {
		asExpected, runs  int
		maxRSS, maxMillis int64
		maxAttempts       int
		errors            []string
	}
	per := map[string]*stats{}
	var order []string
	// Holders seen at each alive phase ("scenario/phase"), and how often.
	held := map[string]map[string]int{}
	var heldOrder []string
	goroutineID := regexp.MustCompile(`goroutine \d+ `)
	var walls []time.Duration
	var problems []string
	for i := range *runs {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(*bin, "run", "--format", "json", "--holders="+strconv.FormatBool(*holders),
			"--payload", bytesize.Compact(payload), "--tasks", fmt.Sprint(*tasks))
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		walls = append(walls, wall)
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			return fmt.Errorf("run %d: %v\n%s", i+1, err, stderr.String())
		}
		var rep scenarios.Report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			return fmt.Errorf("run %d: reading the report: %v", i+1, err)
		}
		for _, r := range rep.Scenarios {
			s := per[r.Name]
			if s == nil {
				s = &stats{}
				per[r.Name] = s
				order = append(order, r.Name)
			}
			s.runs++
			if r.Verdict == scenarios.AsExpected {
				s.asExpected++
			} else {
				s.errors = append(s.errors, fmt.Sprintf("run %d: %s: %s", i+1, r.Verdict, r.Error))
			}
			s.maxRSS = max(s.maxRSS, r.PeakRSSBytes)
			s.maxMillis = max(s.maxMillis, r.WallMillis)
			s.maxAttempts = max(s.maxAttempts, r.Attempts)
			for _, p := range r.Phases {
				if !p.Alive {
					continue
				}
				key := r.Name + "/" + p.Name
				if held[key] == nil {
					held[key] = map[string]int{}
					heldOrder = append(heldOrder, key)
				}
				h := goroutineID.ReplaceAllString(p.Holder, "goroutine ")
				if p.HolderError != "" {
					h = "unknown: " + p.HolderError
				}
				held[key][h]++
			}
		}
		if *holders && !rep.Holders {
			problems = append(problems, fmt.Sprintf("run %d: holders were not looked for", i+1))
		}
		fmt.Fprintf(os.Stderr, "run %d/%d: %.2f s\n", i+1, *runs, wall.Seconds())
		if *maxWall > 0 && wall > *maxWall {
			problems = append(problems, fmt.Sprintf("run %d took %.2f s, target %v", i+1, wall.Seconds(), *maxWall))
		}
	}

	fmt.Printf("ctxleak run --payload %s --tasks %d, %d run(s)\n\n", bytesize.Compact(payload), *tasks, *runs)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tas expected\tmax peak RSS\tRSS limit\tmax child wall\tmax attempts\t")
	for _, name := range order {
		s := per[name]
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%.2f s\t%d\t\n", name, s.asExpected, s.runs,
			bytesize.Format(s.maxRSS), bytesize.Format(rssLimit), float64(s.maxMillis)/1000, s.maxAttempts)
		if s.maxRSS > rssLimit {
			problems = append(problems, fmt.Sprintf("%s: peak RSS %s above %s", name, bytesize.Format(s.maxRSS), bytesize.Format(rssLimit)))
		}
		problems = append(problems, s.errors...)
	}
	tw.Flush()

	if *holders {
		fmt.Printf("\nholders at each alive phase (runs that found each):\n")
		for _, key := range heldOrder {
			var hs []string
			for h := range held[key] {
				hs = append(hs, h)
			}
			sort.Strings(hs)
			for _, h := range hs {
				fmt.Printf("  %-48s %2d/%d  %s\n", key, held[key][h], *runs, h)
			}
		}
	}

	sorted := append([]time.Duration(nil), walls...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	target := "no target"
	if *maxWall > 0 {
		target = "target " + maxWall.String()
	}
	fmt.Printf("\nwall per run: min %.2f s, median %.2f s, max %.2f s (%s)\n",
		sorted[0].Seconds(), sorted[len(sorted)/2].Seconds(), sorted[len(sorted)-1].Seconds(), target)
	if len(problems) > 0 {
		return errors.New("targets missed or verdicts not as expected:\n  " + strings.Join(problems, "\n  "))
	}
	fmt.Println("all targets met; every verdict as expected in every run")
	return nil
}
