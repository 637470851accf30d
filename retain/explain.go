package retain

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/heapdump"
)

func init() {
	explain = explainHolders
	prepareExplain = loadRunningTypes
}

// loadRunningTypes opens the running binary and decodes its types, which
// explainHolders keeps for the process: loaded before a dump, they are in
// every dump alike rather than only in those after the first failure.
func loadRunningTypes() {
	if bin, err := runningBinary(); err == nil {
		bin.LoadTypes()
	}
}

// explainHolders analyses the heap dump with the heap package and describes,
// for each value still alive, who holds it: the goroutine frame, global or
// timer, the typed path from it, and what it retains.
func explainHolders(dumpPath, binaryPath string, alive []Tracked) (*explanation, error) {
	ex := &explanation{entries: make([]string, len(alive))}
	// The binary kept next to the dump is a copy of the running
	// executable, which is read once per process: its DWARF types are
	// most of an explanation's time, and a test binary may fail often.
	bin, err := runningBinary()
	if err != nil && binaryPath != "" {
		if bin, err = binsym.Open(binaryPath); err == nil {
			defer bin.Close()
		}
	}
	if err != nil {
		ex.notes = append(ex.notes, fmt.Sprintf("no executable to read names from (%v): frames have no source lines, globals and types are unnamed", err))
	}
	addrs := make([]uint64, len(alive))
	for i, t := range alive {
		addrs[i] = uint64(t.Addr)
	}
	res, err := analyze(dumpPath, bin, addrs)
	if err != nil {
		return nil, err
	}
	if res.unnamed && bin != nil && !bin.HasSymbols() {
		// A stripped test binary: name the globals from a relink of it.
		syms, err := testGlobals(res.segments, bin)
		if err == nil {
			res, err = analyze(dumpPath, bin, addrs, heap.Globals(syms...))
			if err != nil {
				return nil, err
			}
		}
		if err != nil {
			note := "globals are named by address: " + err.Error()
			if strings.HasPrefix(err.Error(), stripped) {
				note += "; go test -o FILE keeps the symbols"
			}
			ex.notes = append(ex.notes, note)
		}
	}
	groups := res.groups
	for i, g := range groups {
		if g == nil {
			continue
		}
		t := alive[i]
		if g.Object.Type == "" {
			g.Object.Type = strings.TrimPrefix(t.Type, "*")
		}
		text := g.Text(strconv.Quote(t.Label), heap.PlainStyle{})
		first, rest, _ := strings.Cut(text, "\n")
		var b strings.Builder
		b.WriteString(first + "\n")
		if t.Site != "" {
			b.WriteString("    tracked at " + t.Site + "\n")
		}
		b.WriteString(rest)
		ex.entries[i] = b.String()
	}
	return ex, nil
}

// runningBinary is the running executable, opened on first use and kept
// open: binsym.Binary is safe for concurrent use.
var runningBinary = sync.OnceValues(openRunningBinary)

func openRunningBinary() (*binsym.Binary, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return binsym.Open(exe)
}

// analysis is what analyze found.
type analysis struct {
	groups []*heap.Group // parallel to the addresses; nil where the dump has no live object
	// unnamed is set when a global the groups name (a holder, or another
	// root that reaches a shared object) is known only by its address.
	unnamed  bool
	segments []heapdump.Segment // the dump's data and bss segments
}

// analyze reads the dump and explains the objects at addrs.
func analyze(dumpPath string, bin *binsym.Binary, addrs []uint64, opts ...heap.Option) (analysis, error) {
	a, err := heap.Analyze(dumpPath, bin, opts...)
	if err != nil {
		return analysis{}, err
	}
	defer a.Close()
	res := analysis{segments: a.Graph().Dump().Segments}
	res.groups, err = a.Explain(addrs)
	if err != nil {
		return analysis{}, err
	}
	for _, g := range res.groups {
		if g == nil {
			continue
		}
		for _, h := range append([]heap.Holder{g.Root}, g.OtherRoots...) {
			if h.Kind == heapdump.RootGlobal && strings.HasPrefix(h.Global, "0x") {
				res.unnamed = true
			}
		}
	}
	return res, nil
}
