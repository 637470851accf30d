package heap

import (
	"io"
	"sync"

	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/inputfile"
)

// Progress is one report of Analyze's progress, for a status line: a dump
// of a few gigabytes takes seconds to read and analyse.
type Progress struct {
	// Phase is PhaseRead, PhaseGraph or PhaseDominators.
	Phase string
	// Done and Total are the bytes of the dump read and its size, for
	// PhaseRead.
	Done, Total int64
}

// The phases of Analyze, in order.
const (
	PhaseRead       = "read"       // reading the dump's records
	PhaseGraph      = "graph"      // building the object graph
	PhaseDominators = "dominators" // computing the dominator tree and retained sizes
)

// OnProgress has Analyze call report as it reads the dump (about every 1%
// of its bytes) and as it starts each later phase. report is called from
// Analyze's goroutine. It is an option of Analyze.
func OnProgress(report func(Progress)) Option {
	return Option{func(o *options) { o.progress = report }}
}

// loadWithProgress is heapdump.Load with the bytes read reported through
// report. The caller closes the file returned once done with the graph.
func loadWithProgress(path string, lo heapdump.Options, report func(Progress)) (*heapdump.Graph, io.Closer, error) {
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	report(Progress{Phase: PhaseRead, Total: size})
	r := &countingReader{r: f, size: size, step: max(size/100, 1), report: report}
	prepare := lo.Prepare
	lo.Prepare = func(d *heapdump.Dump) error {
		report(Progress{Phase: PhaseGraph})
		if prepare != nil {
			return prepare(d)
		}
		return nil
	}
	g, err := heapdump.Read(r, size, path, lo)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return g, f, nil
}

// countingReader reports how far into the dump the reads have come.
type countingReader struct {
	r          io.ReaderAt
	size, step int64
	report     func(Progress)

	mu         sync.Mutex
	done, next int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.mu.Lock()
	defer c.mu.Unlock()
	if end := off + int64(n); end > c.done {
		c.done = end
		if c.done >= c.next {
			c.next = c.done + c.step
			c.report(Progress{Phase: PhaseRead, Done: c.done, Total: c.size})
		}
	}
	return n, err
}
