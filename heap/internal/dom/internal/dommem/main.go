// Command dommem measures the time and the memory that package dom needs, on
// top of its input, for the dominator tree and retained sizes of a generated
// graph. It builds the graph, lets the garbage collector return what building
// it left, resets the peak resident set size of the process (Linux), then
// runs dom.New and dom.Retained and prints how long each took, how much they
// allocated, and how far the peak resident size rose above the input.
//
//	go run ./heap/internal/dom/internal/dommem -n 15M
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ctxleak/ctxleak/heap/internal/dom"
	"github.com/ctxleak/ctxleak/heap/internal/dom/internal/graphgen"
)

func main() {
	size := flag.String("n", "3M", "number of nodes (k and M suffixes)")
	shape := flag.String("shape", "heap", "graph shape: heap or random")
	seed := flag.Uint64("seed", 1, "generator seed")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of New and Retained to `file`")
	flag.Parse()
	if err := run(*size, *shape, *seed, *cpuprofile); err != nil {
		fmt.Fprintln(os.Stderr, "dommem:", err)
		os.Exit(2)
	}
}

func run(size, shape string, seed uint64, cpuprofile string) error {
	n, err := parseSize(size)
	if err != nil {
		return err
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
	runtime.GC()
	debug.FreeOSMemory()
	base, err := status("VmRSS")
	if err != nil {
		return err
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the peak RSS: %v", err)
	}
	var m0, m1, m2 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}

	c0, t0 := cpu(), time.Now()
	t, err := dom.New(h.Graph, h.Root)
	if err != nil {
		return err
	}
	t1 := time.Now()
	runtime.ReadMemStats(&m1)
	ret := dom.Retained(t, h.Sizes)
	t2, c2 := time.Now(), cpu()
	pprof.StopCPUProfile()
	runtime.ReadMemStats(&m2)
	peak, err := status("VmHWM")
	if err != nil {
		return err
	}

	const MiB = 1 << 20
	fmt.Printf("shape=%s nodes=%d edges=%d reachable=%d root-retains=%d\n",
		shape, h.Graph.Len(), len(h.Graph.Succ), len(t.Preorder()), ret[h.Root])
	fmt.Printf("wall: New %.3fs, Retained %.3fs, both %.3fs; CPU (user+sys, all threads) %.3fs\n",
		t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), t2.Sub(t0).Seconds(), (c2 - c0).Seconds())
	fmt.Printf("allocated: New %.1f MiB, Retained %.1f MiB; peak RSS %.1f MiB above the input's %.1f MiB\n",
		float64(m1.TotalAlloc-m0.TotalAlloc)/MiB, float64(m2.TotalAlloc-m1.TotalAlloc)/MiB,
		float64(peak-base)/MiB, float64(base)/MiB)
	runtime.KeepAlive(h)
	return nil
}

// cpu returns the user and system CPU time the process has used.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// status returns a size field of /proc/self/status, in bytes.
func status(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
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
