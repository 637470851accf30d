package profiles

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"
)

// goroutineProfile returns this process's goroutine profile, written by the
// runtime in proto form (debug=0) and in the legacy text (debug=1).
func goroutineProfile(t *testing.T, debug int) *Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, debug); err != nil {
		t.Fatal(err)
	}
	p, err := Parse("goroutine", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitGone returns once no goroutine of this process runs fn. A worker
// that has called its WaitGroup's Done may still be on its way out, and a
// profile taken then would list it; waitGone polls with back-off until it
// has gone.
func waitGone(t *testing.T, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for wait := time.Millisecond; ; wait *= 2 {
		n := runtime.Stack(buf, true)
		if !strings.Contains(string(buf[:n]), fn+"(") {
			return
		}
		if wait > 10*time.Second {
			t.Fatalf("goroutines in %s still run", fn)
		}
		time.Sleep(wait)
	}
}

//go:noinline
func growthWorker(ready, done *sync.WaitGroup, stop chan struct{}) {
	defer done.Done()
	ready.Done()
	<-stop
}

//go:noinline
func shrinkWorker(ready, done *sync.WaitGroup, stop chan struct{}) {
	defer done.Done()
	ready.Done()
	<-stop
}

// TestCompareGoroutines takes real goroutine profiles of this process: 6
// shrinkWorker goroutines run at the base and have ended by the profile; 20
// growthWorker goroutines, half of them under pprof labels, start between
// the two. The growth is one group of 20 growthWorker goroutines whatever
// their labels, in both profile formats, and the ended goroutines neither
// appear as a group nor offset the growth.
func TestCompareGoroutines(t *testing.T) {
	for _, debug := range []int{0, 1} {
		t.Run(map[int]string{0: "proto", 1: "legacy"}[debug], func(t *testing.T) {
			var ready, done, grown sync.WaitGroup
			stopShrink, stopGrowth := make(chan struct{}), make(chan struct{})
			// The next subtest's base must not see this one's workers.
			defer waitGone(t, "profiles.growthWorker")
			defer grown.Wait()
			defer close(stopGrowth)
			ready.Add(6)
			done.Add(6)
			for range 6 {
				go shrinkWorker(&ready, &done, stopShrink)
			}
			ready.Wait()
			base := goroutineProfile(t, debug)
			close(stopShrink)
			done.Wait()
			waitGone(t, "profiles.shrinkWorker")

			ready.Add(20)
			grown.Add(20)
			for i := range 20 {
				if i%2 == 0 {
					go growthWorker(&ready, &grown, stopGrowth)
					continue
				}
				pprof.Do(context.Background(), pprof.Labels("request_id", "r"), func(context.Context) {
					go growthWorker(&ready, &grown, stopGrowth)
				})
			}
			ready.Wait()
			prof := goroutineProfile(t, debug)

			var opt Options
			pr, err := AnalyzeGoroutines([]*Profile{prof}, opt)
			if err != nil {
				t.Fatal(err)
			}
			br, err := AnalyzeGoroutines([]*Profile{base}, opt)
			if err != nil {
				t.Fatal(err)
			}
			var shrinking int64
			for _, gr := range br.Groups {
				if gr.Start.Function == "github.com/ctxleak/ctxleak/profiles.shrinkWorker" {
					shrinking += gr.Count
				}
			}
			if shrinking != 6 {
				t.Fatalf("base has %d shrinkWorker goroutines, want 6", shrinking)
			}
			g := CompareGoroutines(pr, br)
			if g.BaseTotal != br.Total {
				t.Errorf("base total %d, want %d", g.BaseTotal, br.Total)
			}
			var sum int64
			var worker *GoroutineGrowthGroup
			for i, gr := range g.Groups {
				sum += gr.Growth
				if gr.Growth <= 0 || gr.Growth != gr.Count-gr.BaseCount {
					t.Errorf("group %+v: growth is not count minus base count above 0", gr)
				}
				if i > 0 && gr.Growth > g.Groups[i-1].Growth {
					t.Errorf("groups not largest growth first: %+v", g.Groups)
				}
				switch gr.Start.Function {
				case "github.com/ctxleak/ctxleak/profiles.growthWorker":
					if worker != nil {
						t.Errorf("growthWorker in two groups: %+v and %+v", *worker, gr)
					}
					worker = &g.Groups[i]
				case "github.com/ctxleak/ctxleak/profiles.shrinkWorker":
					t.Errorf("ended goroutines reported as growth: %+v", gr)
				}
			}
			if sum != g.Growth {
				t.Errorf("growth %d, want the sum of the groups' %d", g.Growth, sum)
			}
			if worker == nil || worker.Count != 20 || worker.BaseCount != 0 || worker.Growth != 20 {
				t.Fatalf("growthWorker group %+v, want 20 goroutines grown from 0; groups %+v", worker, g.Groups)
			}
			if g.Growth < 20 {
				t.Errorf("growth %d, want at least the 20 growthWorker goroutines", g.Growth)
			}
		})
	}
}

// TestGoroutineGrowthGate checks the gate's edge: it trips when the growth
// reaches the limit, and needs a base.
func TestGoroutineGrowthGate(t *testing.T) {
	rep := &GoroutineReport{Base: &GoroutineGrowth{Growth: 3, Groups: []GoroutineGrowthGroup{}}}
	for _, tt := range []struct {
		limit   int64
		tripped bool
	}{{2, true}, {3, true}, {4, false}} {
		res, err := Gates{GoroutineGrowth: &tt.limit}.Check(nil, rep)
		if err != nil || len(res) != 1 || res[0].Tripped != tt.tripped || res[0].Value != 3 || res[0].Gate != GateGoroutineGrowth {
			t.Errorf("limit %d: %+v, %v; want tripped %v", tt.limit, res, err, tt.tripped)
		}
	}
	limit := int64(1)
	if _, err := (Gates{GoroutineGrowth: &limit}).Check(nil, &GoroutineReport{}); err == nil {
		t.Error("no error without a base")
	}
}
