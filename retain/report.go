package retain

import (
	"fmt"
	"strings"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// report writes a heap dump (unless turned off), asks explain for the
// holders, and returns the failure text. It is plain text with short lines,
// for a terminal and for a CI log alike.
func (tr *Tracker) report(alive []Tracked, st waitStats) string {
	var b strings.Builder
	switch {
	case st.total > 0:
		fmt.Fprintf(&b, "retain: %d of %d tracked values still alive after %s (%s)\n",
			len(alive), st.total, roundDuration(st.waited), plural(st.gcs, "GC"))
	default:
		fmt.Fprintf(&b, "retain: %s still alive\n", plural(len(alive), "tracked value"))
	}
	listAlive(&b, alive)

	if tr.opts.noDump {
		b.WriteString("no heap dump (NoDump): holders not known\n")
		return strings.TrimSuffix(b.String(), "\n")
	}
	d, err := writeDump(tr.opts.dumpDir, tr.name)
	if err != nil {
		fmt.Fprintf(&b, "no heap dump: %v\n", err)
		return strings.TrimSuffix(b.String(), "\n")
	}
	explained := false
	if explain != nil {
		rep, err := explain(d.path, d.binary, alive)
		if err != nil {
			fmt.Fprintf(&b, "holders not found: %v\n", err)
		} else {
			b.WriteString(strings.TrimSuffix(rep, "\n"))
			b.WriteByte('\n')
			explained = true
		}
	}
	fmt.Fprintf(&b, "heap dump: %s\n", d.path)
	fmt.Fprintf(&b, "  %s, mode 0600, holds all process memory: delete it when done\n",
		bytesize.Format(d.size))
	if d.binary != "" {
		fmt.Fprintf(&b, "binary: %s\n", d.binary)
	}
	if !explained {
		fmt.Fprintf(&b, "run: ctxleak holders %s\n", d.path)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// listAlive writes one entry of two short lines per value.
func listAlive(b *strings.Builder, alive []Tracked) {
	for _, t := range alive {
		size := "size in dump"
		if t.Size > 0 {
			size = bytesize.Format(int64(t.Size))
		}
		fmt.Fprintf(b, "  %q %s, %s at %#x\n", t.Label, t.Type, size, t.Addr)
		if t.Site != "" {
			fmt.Fprintf(b, "    tracked at %s\n", t.Site)
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

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
