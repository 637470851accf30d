package heap

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/dumptest"
	"github.com/ctxleak/ctxleak/internal/testbuild"
)

// The pile tests build testdata/piles, which makes many small retained
// objects of one shape and writes a heap dump of itself, and check that
// Holders groups them before it applies MinSize.

var (
	pilesOnce sync.Once
	pilesExe  string
	pilesErr  error
	pilesMu   sync.Mutex
	pileRuns  = map[string]*pileRun{}
)

// pileRun is a run of testdata/piles: what it printed, its dump.
type pileRun struct {
	Pattern     string `json:"pattern"`
	N           int    `json:"n"`
	PayloadAddr uint64 `json:"payload_addr"`
	dump        string
}

// runPile runs testdata/piles once per pattern and size and test binary.
func runPile(t testing.TB, pattern string, n int) *pileRun {
	t.Helper()
	dir := dumptest.TempDir(t)
	pilesOnce.Do(func() {
		pilesExe = filepath.Join(dir, "piles")
		if out, err := testbuild.Build(pilesExe, nil, "./testdata/piles"); err != nil {
			pilesErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if pilesErr != nil {
		t.Fatal(pilesErr)
	}
	name := fmt.Sprintf("%s-%d", pattern, n)
	pilesMu.Lock()
	defer pilesMu.Unlock()
	if r, ok := pileRuns[name]; ok {
		return r
	}
	dump := filepath.Join(dir, "piles-"+name+".dump")
	out, err := exec.Command(pilesExe, pattern, fmt.Sprint(n), dump).Output()
	if err != nil {
		t.Fatalf("piles %s %d: %v", pattern, n, err)
	}
	r := &pileRun{dump: dump}
	if err := json.Unmarshal(out, r); err != nil {
		t.Fatalf("piles %s printed %q: %v", name, out, err)
	}
	pileRuns[name] = r
	return r
}

// analyze analyses the run's dump with the executable that wrote it.
func (r *pileRun) analyze(t testing.TB) *Analysis {
	t.Helper()
	a, err := Analyze(r.dump, openShared(t, pilesExe))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// 2,000 goroutines that each hold a context with a 4 KiB value: no object
// is 1 MiB, no goroutine holds 1 MiB, together they hold 8 MiB.
func TestHoldersPileOfGoroutines(t *testing.T) {
	t.Parallel()
	const n, value = 2000, 4 << 10
	a := runPile(t, "goroutines", n).analyze(t)
	rep, err := a.Holders()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 {
		t.Fatalf("%d groups, want 1:\n%s", len(rep.Groups), reportText(t, rep))
	}
	g := rep.Groups[0]
	if g.Root.Kind != heapdump.RootFrame || g.Root.Function != "main.wait" || g.Root.CreatedBy == nil || g.Root.CreatedBy.Function != "main.main" {
		t.Errorf("holder %+v, want the frame of main.wait, created in main.main", g.Root)
	}
	if g.Count != n || g.GoroutineCount != n || len(g.Goroutines) != MaxGoroutineIDs || !g.Holding {
		t.Errorf("%d objects, %d goroutines (%d ids listed), holding %v: want %d held directly by %d goroutines, %d ids",
			g.Count, g.GoroutineCount, len(g.Goroutines), g.Holding, n, n, MaxGoroutineIDs)
	}
	if g.Object.Type != "context.valueCtx" {
		t.Errorf("object %s, want context.valueCtx", g.Object.Type)
	}
	// Each holds a context, the value's interface box and the value.
	if g.RetainedBytes < n*value || g.RetainedBytes > n*(value+256) || g.EachMinBytes < value || g.EachMaxBytes > value+256 {
		t.Errorf("retained %d bytes, %d to %d each: want %d values of %d bytes and a little more", g.RetainedBytes, g.EachMinBytes, g.EachMaxBytes, n, value)
	}
	text := reportText(t, rep)
	if want := "#1 2,000 goroutines in main.wait (created at main.main piles/main.go:"; !strings.Contains(text, want) {
		t.Errorf("no %q in\n%s", want, text)
	}
	if want := fmt.Sprintf(" hold %s: 2,000 x context.valueCtx of 48 B, retaining", bytesize.Format(int64(g.RetainedBytes))); !strings.Contains(text, want) {
		t.Errorf("no %q in\n%s", want, text)
	}
	// The threshold applies to the group.
	for _, tt := range []struct {
		min  uint64
		want int
	}{{g.RetainedBytes - g.RetainedBytes/10, 1}, {g.RetainedBytes + 1, 0}} {
		rep, err := a.Holders(MinSize(tt.min))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Groups) != tt.want {
			t.Errorf("MinSize(%d): %d groups, want %d", tt.min, len(rep.Groups), tt.want)
		}
	}
}

// 500 buffers of 4 KiB that two globals share: one shared group, held by
// one of them, reached from the other.
func TestHoldersSharedPile(t *testing.T) {
	t.Parallel()
	const n, size = 500, 4 << 10
	rep, err := runPile(t, "shared", n).analyze(t).Holders()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 {
		t.Fatalf("%d groups, want 1:\n%s", len(rep.Groups), reportText(t, rep))
	}
	g := rep.Groups[0]
	other := map[string]string{"main.left": "main.right", "main.right": "main.left"}[g.Root.Global]
	if g.Root.Kind != heapdump.RootGlobal || other == "" || !g.Shared || g.OtherRootsTotal != 1 || g.OtherRoots[0].Global != other {
		t.Errorf("holder %+v, shared %v, others %+v: want main.left or main.right, shared with the other", g.Root, g.Shared, g.OtherRoots)
	}
	if g.Count != n || g.RetainedBytes != n*size || g.Object.Type != "[4096]uint8" {
		t.Errorf("%d x %s retaining %d bytes, want %d x [4096]uint8 retaining %d", g.Count, g.Object.Type, g.RetainedBytes, n, n*size)
	}
}

// A program with 2,000 idle goroutines holds nothing worth a report.
func TestHoldersCleanPile(t *testing.T) {
	t.Parallel()
	rep, err := runPile(t, "clean", 2000).analyze(t).Holders()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 0 || rep.GroupsTotal != 0 {
		t.Errorf("%d groups in a clean program:\n%s", rep.GroupsTotal, reportText(t, rep))
	}
}

// The path to a payload at the end of a long list is cut: its first and
// last steps, and one that counts those left out.
func TestHoldersLongList(t *testing.T) {
	t.Parallel()
	n := 200_000
	if os.Getenv("CTXLEAK_LONG") != "" {
		n = 1_000_000
	}
	r := runPile(t, "list", n)
	a := r.analyze(t)
	for _, max := range []int{0, 10} {
		rep, err := a.Holders(MaxPathSteps(max))
		if err != nil {
			t.Fatal(err)
		}
		var g *Group
		for _, x := range rep.Groups {
			if x.Object.Addr == fmt.Sprintf("%#x", r.PayloadAddr) {
				g = x
			}
		}
		if g == nil {
			t.Fatalf("no group for the payload:\n%s", reportText(t, rep))
		}
		if max == 0 {
			max = DefaultMaxPathSteps
		}
		steps := n + 1 // the nodes and the payload
		if len(g.Path) != max+1 || g.OmittedSteps != steps-max {
			t.Errorf("MaxPathSteps(%d): %d steps shown, %d left out; want %d and %d", max, len(g.Path), g.OmittedSteps, max+1, steps-max)
		}
		if g.Root.Global != "main.head" || g.Path[len(g.Path)-1].Type != "[]uint8" || g.Path[len(g.Path)-2].Type != "main.node" {
			t.Errorf("held by %q through %+v", g.Root.Global, g.Path)
		}
		want := fmt.Sprintf("... %s more steps through main.node.next ...", thousands(steps-max))
		if text := reportText(t, rep); !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
		// What the list's head holds is made of nodes, and one payload.
		var list *Group
		for _, x := range rep.Groups {
			if x.Holding && x.Root.Global == "main.head" {
				list = x
			}
		}
		if list == nil || len(list.MadeOf) == 0 {
			t.Fatalf("no holding of main.head made of nodes:\n%s", reportText(t, rep))
		}
		// Past maxMadeOfObjects, the parts count the first objects only,
		// and say so.
		counted := min(uint64(n), maxMadeOfObjects-1)
		if list.MadeOfObjects != counted {
			t.Errorf("made of %d objects, want %d", list.MadeOfObjects, counted)
		}
		nodes := list.MadeOf[0]
		if nodes.Type != "main.node" || nodes.Count < counted-2 || nodes.Bytes != nodes.Count*nodes.Size {
			t.Errorf("made of %+v, want %d main.node", list.MadeOf, counted-2)
		}
		if n < maxMadeOfObjects {
			if len(list.MadeOf) < 2 || list.MadeOf[1].Type != "[]uint8" || list.MadeOf[1].Count != 1 || list.MadeOf[1].Bytes != 2<<20 {
				t.Errorf("made of %+v, want a 2 MiB []uint8 too", list.MadeOf)
			}
		} else if want := fmt.Sprintf("(counting the first %s of %s objects)", thousands(int(counted)), thousands(n)); !strings.Contains(reportText(t, rep), want) {
			t.Errorf("no %q in\n%s", want, reportText(t, rep))
		}
		if len(list.Inside) == 0 || list.Inside[0].Via != ".next" || list.Inside[len(list.Inside)-1].Type != "main.node" {
			t.Errorf("path inside %+v, want .next to a main.node", list.Inside)
		}
	}
}

// reportText is the report as WriteText writes it, plainly.
func reportText(t testing.TB, rep *Report) string {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteText(&b, PlainStyle{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
