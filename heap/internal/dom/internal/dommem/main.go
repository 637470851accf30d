// Command dommem measures the time and the memory that package dom needs, on
// top of its input, for the dominator tree and retained sizes of a generated
// graph. It builds the graph once; then, for each run, lets the garbage
// collector return what came before, resets the peak resident set size of the
// process (Linux), runs dom.New and dom.Retained, and prints how long they
// took, how much they allocated, and how far the peak resident size rose
// above the input. Last come the medians over the runs.
//
//	go run ./heap/internal/dom/internal/dommem -n 15M -runs 5
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
	"github.com/ctxleak/ctxleak/heap/internal/dom/internal/graphgen"
	"github.com/ctxleak/ctxleak/internal/procmem"
)

func main() {
	size := flag.String("n", "3M", "number of nodes (k and M suffixes)")
	shape := flag.String("shape", "heap", "graph shape: heap or random")
	seed := flag.Uint64("seed", 1, "generator seed")
	runs := flag.Int("runs", 5, "number of runs")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runs to `file`")
	flag.Parse()
	if err := run(*size, *shape, *seed, *runs, *cpuprofile); err != nil {
		fmt.Fprintln(os.Stderr, "dommem:", err)
		os.Exit(2)
	}
}

const MiB = 1 << 20

type result struct {
	newTime, retainedTime, both, cpu, sys time.Duration
	alloc, peak                           int64 // bytes
}

func run(size, shape string, seed uint64, runs int, cpuprofile string) error {
	n, err := parseSize(size)
	if err != nil {
		return err
	}
	if runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", runs)
	}
	var h graphgen.Heap
	switch shape {
	case "heap":
		h = graphgen.HeapShape(n, seed)
	case "random":
		h = graphgen.Random(n, n*5/3, 0.9, seed)
	default:
		return fmt.Errorf("-shape %q: want heap or random", shape)
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("shape=%s nodes=%d edges=%d GOMAXPROCS=%d\n", shape, h.Graph.Len(), len(h.Graph.Succ), runtime.GOMAXPROCS(0))
	var rs []result
	for range runs {
		r, err := once(h)
		if err != nil {
			return err
		}
		fmt.Printf("wall: New %.3fs, Retained %.3fs, both %.3fs; CPU %.3fs (system %.3fs); allocated %.1f MiB; peak RSS +%.1f MiB\n",
			r.newTime.Seconds(), r.retainedTime.Seconds(), r.both.Seconds(), r.cpu.Seconds(), r.sys.Seconds(),
			float64(r.alloc)/MiB, float64(r.peak)/MiB)
		rs = append(rs, r)
	}
	med := func(f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	fmt.Printf("median of %d: both %.3fs wall, %.3fs CPU; allocated %.1f MiB; peak RSS +%.1f MiB\n", len(rs),
		med(func(r result) float64 { return r.both.Seconds() }),
		med(func(r result) float64 { return r.cpu.Seconds() }),
		med(func(r result) float64 { return float64(r.alloc) / MiB }),
		med(func(r result) float64 { return float64(r.peak) / MiB }))
	return nil
}

// once runs New and Retained on h and measures them.
func once(h graphgen.Heap) (result, error) {
	var r result
	runtime.GC()
	debug.FreeOSMemory()
	base, err := procmem.Status("VmRSS")
	if err != nil {
		return r, err
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return r, fmt.Errorf("resetting the peak RSS: %v", err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)

	c0, s0 := cpu()
	t0 := time.Now()
	t, err := dom.New(h.Graph, h.Root)
	if err != nil {
		return r, err
	}
	t1 := time.Now()
	ret := dom.Retained(t, h.Sizes)
	t2 := time.Now()
	c2, s2 := cpu()

	runtime.ReadMemStats(&m1)
	peak, err := procmem.Status("VmHWM")
	if err != nil {
		return r, err
	}
	if ret[h.Root] == 0 {
		return r, fmt.Errorf("the root retains nothing")
	}
	r.newTime, r.retainedTime, r.both, r.cpu, r.sys = t1.Sub(t0), t2.Sub(t1), t2.Sub(t0), c2-c0, s2-s0
	r.alloc = int64(m1.TotalAlloc - m0.TotalAlloc)
	r.peak = peak - base
	return r, nil
}

// cpu returns the CPU time the process has used, user and system, and the
// system part of it.
func cpu() (total, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano())
}

func parseSize(s string) (int, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f*mult < 1 {
		return 0, fmt.Errorf("-n %q: want a positive number of nodes", s)
	}
	return int(f * mult), nil
}
