package retain

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/leakedg"
	"github.com/ctxleak/ctxleak/internal/selfdump"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// maxLeakLines is how many groups of leaked goroutines a failure lists.
const maxLeakLines = 20

// assertGoroutines is AssertReleased with CheckGoroutines: after the wait,
// one heap dump (unless NoDump) and then Go 1.27's goroutineleak profile,
// in that order; the test fails for the values still alive, explained
// from the dump, and for the goroutines started since New that the
// profile proves leaked, with what they retain in the dump. A check that
// passes deletes its dump.
func (tr *Tracker) assertGoroutines(alive []Tracked, st waitStats) bool {
	tr.tb.Helper()
	if pprof.Lookup("goroutineleak") == nil {
		if l, ok := tr.tb.(interface{ Logf(string, ...any) }); ok {
			l.Logf("retain: CheckGoroutines: the goroutineleak profile is not available in %s (Go 1.27 and later have it): goroutines not checked", runtime.Version())
		}
		if len(alive) > 0 {
			tr.tb.Errorf("%s", tr.report(alive, st))
		}
		return len(alive) == 0
	}
	failures.Lock()
	defer failures.Unlock()
	beforeDump()
	var d dumpFile
	var dumpErr error
	remove := func() {}
	if tr.opts.noDump {
		dumpErr = errors.New("NoDump")
		if err := pprof.Lookup("goroutineleak").WriteTo(io.Discard, 0); err != nil {
			tr.tb.Errorf("retain: CheckGoroutines: the goroutineleak profile: %v", err)
			return false
		}
	} else {
		d, remove, dumpErr = writeDumpThenProfile(tr.opts.dumpDir, tr.name)
		if d.path != "" && dumpErr != nil {
			// The dump is written, the profile failed.
			remove()
			tr.tb.Errorf("retain: CheckGoroutines: %v", dumpErr)
			return false
		}
		if d.path == "" && !errors.Is(dumpErr, selfdump.ErrLeakedGoroutines) {
			tr.tb.Errorf("retain: CheckGoroutines: %v", dumpErr)
			return false
		}
	}
	leaked := tr.leakedSince()
	if len(alive) == 0 && len(leaked) == 0 {
		remove()
		return true
	}
	if d.path != "" {
		d.binary = keepBinary(filepath.Dir(d.path))
	}
	var b strings.Builder
	if len(alive) > 0 {
		writeHead(&b, alive, st)
		if tr.opts.noDump {
			listAlive(&b, alive, nil)
			b.WriteString("\nno heap dump (NoDump): holders not known\n")
		} else {
			tr.explainDump(&b, alive, d, dumpErr)
		}
		b.WriteString("\n")
	}
	if len(leaked) > 0 {
		tr.writeLeaked(&b, leaked, d, dumpErr, len(alive) > 0 && !tr.opts.noDump)
	}
	tr.tb.Errorf("%s", strings.TrimSuffix(b.String(), "\n"))
	return false
}

// leakedSince returns the goroutines marked leaked now that were not
// running when the Tracker was made.
func (tr *Tracker) leakedSince() []leakedg.Goroutine {
	gs, _ := leakedg.Marked()
	kept := gs[:0]
	for _, g := range gs {
		if !tr.before[g.ID] {
			kept = append(kept, g)
		}
	}
	return kept
}

// writeLeaked writes the leaked goroutines, grouped by where they block
// and where they were created, with what they retain in the dump d, and
// where d is unless the entries of the values said it (shown).
func (tr *Tracker) writeLeaked(b *strings.Builder, gs []leakedg.Goroutine, d dumpFile, dumpErr error, shown bool) {
	retained := "retained bytes unknown: no heap dump"
	if dumpErr != nil {
		retained += ": " + dumpErr.Error()
	}
	if d.path != "" {
		retained = tr.leakedRetained(gs, d)
	}
	fmt.Fprintf(b, "retain: %s started during the test proven leaked by the goroutineleak profile "+
		"(blocked for ever on channels or locks nothing runnable can reach)\n", english.Plural(len(gs), "goroutine"))
	fmt.Fprintf(b, "  %s\n", retained)
	groups := leakedg.Groups(gs)
	for i, g := range groups {
		if i == maxLeakLines {
			fmt.Fprintf(b, "\n... and %d more groups\n", len(groups)-i)
			break
		}
		ids := make([]string, len(g.IDs))
		for j, id := range g.IDs {
			ids[j] = fmt.Sprint(id)
		}
		fmt.Fprintf(b, "\n%s in %s [%s]\n", english.Plural(g.Count, "goroutine"), textsafe.Escape(g.Function), textsafe.Escape(g.Wait))
		if g.Location != "" {
			fmt.Fprintf(b, "    at %s\n", textsafe.Escape(g.Location))
		}
		if g.CreatedBy != "" {
			fmt.Fprintf(b, "    created by %s at %s\n", textsafe.Escape(g.CreatedBy), textsafe.Escape(g.CreatedAt))
		}
		fmt.Fprintf(b, "    goroutine ids %s", strings.Join(ids, ", "))
		if g.Count > len(ids) {
			fmt.Fprintf(b, " and %d more", g.Count-len(ids))
		}
		b.WriteString("\n")
		if d.path != "" {
			fmt.Fprintf(b, "    retain %s (what their own frames alone keep alive)\n", bytesize.Format(int64(g.RetainedBytes)))
		}
	}
	if d.path != "" && !shown {
		fmt.Fprintf(b, "\nheap dump (taken just before the profile): %s\n", d.path)
		fmt.Fprintf(b, "  %s, mode 0600, holds all process memory: delete it when done\n", bytesize.Format(d.size))
	}
	b.WriteString("note: no heap dump of this process is possible any more: the runtime dies dumping goroutines marked leaked\n")
}

// leakedRetained fills what each goroutine of gs retains in the dump d and
// says it in words.
func (tr *Tracker) leakedRetained(gs []leakedg.Goroutine, d dumpFile) string {
	bin, _ := runningBinary()
	a, err := heap.Analyze(d.path, bin)
	if err != nil {
		return "retained bytes unknown: analysing the heap dump: " + err.Error()
	}
	defer a.Close()
	in, total := leakedg.Retained(a, gs)
	s := fmt.Sprintf("they retain %s in the heap dump taken just before the profile", bytesize.Format(int64(total)))
	if in < len(gs) {
		s += fmt.Sprintf(" (%d of them started after the dump, not counted)", len(gs)-in)
	}
	return s
}
