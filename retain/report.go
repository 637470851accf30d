package retain

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
)

// explain turns a heap dump and the values still alive into the holder
// report: for each value, who holds it and through what. dumpPath is the
// heap dump just written; binaryPath is the executable that wrote it (a kept
// copy, or "" if none could be kept), for function names and types; alive
// has each value's label, Go type, kind, address and known size.
// explain.go sets it to explainHolders; tests replace it.
var explain func(dumpPath, binaryPath string, alive []Tracked) (*explanation, error)

// prepareExplain, when set, loads before the first dump what explain keeps
// for the whole process (the running binary's types), so that every
// failure's dump holds the same caches and none holds more than the first.
var prepareExplain func()

// explanation is what explain says about the values still alive.
type explanation struct {
	// entries, parallel to alive, describe each value and its holder in
	// lines that end in "\n"; "" where the dump does not have the value
	// alive (it was freed after the check).
	entries []string
	// notes say, one sentence each, what the entries cannot tell.
	notes []string
}

// failures serializes the dumps and analyses of failures (see report).
var failures sync.Mutex

// report writes a heap dump (unless turned off), asks explain for the
// holders, and returns the failure text. It is plain text with short lines,
// for a terminal and for a CI log alike.
func (tr *Tracker) report(alive []Tracked, st waitStats) string {
	var b strings.Builder
	writeHead(&b, alive, st)
	if tr.opts.noDump {
		listAlive(&b, alive, nil)
		b.WriteString("\nno heap dump (NoDump): holders not known\n")
		return strings.TrimSuffix(b.String(), "\n")
	}
	// One failure at a time writes its dump and analyses it, after a
	// collection that sweeps away the garbage of the last analysis: a heap
	// dump holds every object not yet swept, and a parsed dump is many
	// times the size of the heap it describes.
	failures.Lock()
	defer failures.Unlock()
	beforeDump()
	d, err := writeDump(tr.opts.dumpDir, tr.name)
	tr.explainDump(&b, alive, d, err)
	return strings.TrimSuffix(b.String(), "\n")
}

// writeHead writes the first line of a failure: how many values are
// still alive.
func writeHead(b *strings.Builder, alive []Tracked, st waitStats) {
	switch {
	case st.total > 0:
		fmt.Fprintf(b, "retain: %d of %d tracked values still alive after %s (%s)\n",
			len(alive), st.total, roundDuration(st.waited), english.Plural(st.gcs, "GC"))
	default:
		fmt.Fprintf(b, "retain: %s still alive\n", english.Plural(len(alive), "tracked value"))
	}
}

// beforeDump loads what explain keeps for the process and collects the
// garbage of the last analysis, before a failure's dump; the caller holds
// failures.
func beforeDump() {
	if explain != nil && prepareExplain != nil {
		prepareExplain()
	}
	runtime.GC()
}

// explainDump writes the entries of the values still alive, explained
// from the dump d, or listed with why there is no dump (err), and where
// the dump is.
func (tr *Tracker) explainDump(b *strings.Builder, alive []Tracked, d dumpFile, err error) {
	if err != nil {
		listAlive(b, alive, nil)
		fmt.Fprintf(b, "\nno heap dump: %v\n", err)
		return
	}
	var ex *explanation
	var exErr error
	if explain != nil {
		ex, exErr = explain(d.path, d.binary, alive)
		if exErr != nil {
			ex = nil
		}
	}
	listAlive(b, alive, ex)
	b.WriteString("\n")
	if exErr != nil {
		fmt.Fprintf(b, "holders not found: %v\n", exErr)
	}
	if ex != nil {
		for _, n := range ex.notes {
			fmt.Fprintf(b, "note: %s\n", n)
		}
	}
	fmt.Fprintf(b, "heap dump: %s\n", d.path)
	fmt.Fprintf(b, "  %s, mode 0600, holds all process memory: delete it when done\n",
		bytesize.Format(d.size))
	if d.binary != "" {
		fmt.Fprintf(b, "run: ctxleak holders %s \\\n    --binary %s\n", d.path, d.binary)
	} else {
		fmt.Fprintf(b, "run: ctxleak holders %s\n", d.path)
		b.WriteString("  (the test binary could not be kept: functions will be unnamed)\n")
	}
}

// listAlive writes an entry per value, after a blank line: the explained
// one when ex has it, or else the value and where it was tracked.
func listAlive(b *strings.Builder, alive []Tracked, ex *explanation) {
	for i, t := range alive {
		b.WriteString("\n")
		if ex != nil && i < len(ex.entries) && ex.entries[i] != "" {
			b.WriteString(ex.entries[i])
			continue
		}
		size := "size in dump"
		if t.Size > 0 {
			size = bytesize.Format(int64(t.Size))
		}
		fmt.Fprintf(b, "%q %s, %s at %#x\n", t.Label, t.Type, size, t.Addr)
		if t.Site != "" {
			fmt.Fprintf(b, "    tracked at %s\n", t.Site)
		}
		if ex != nil {
			b.WriteString("    not reachable in the heap dump: freed after the check, too late\n")
		}
	}
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}
