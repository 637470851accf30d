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
// of its bytes) and as it starts each later phase. report is called one
// call at a time, from Analyze's goroutine or, while the dump is read,
// from the reader's. It is an option of Analyze.
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
		r.finish()
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

// countingReader reports how much of the dump has been read.
type countingReader struct {
	r          io.ReaderAt
	size, step int64
	report     func(Progress)

	mu         sync.Mutex
	done, next int64
	finished   bool
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return n, err // a later read of an object's record
	}
	// Bytes read, not the furthest offset: a helper reads parts of the
	// objects further on while the main parser reads from the start.
	c.done = min(c.done+int64(n), c.size)
	if c.done >= c.next {
		c.next = c.done + c.step
		c.report(Progress{Phase: PhaseRead, Done: c.done, Total: c.size})
	}
	return n, err
}

// finish reports the whole dump read, once the reader is done with it
// (it skips what it does not need), and no read after.
func (c *countingReader) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.finished && c.done < c.size {
		c.report(Progress{Phase: PhaseRead, Done: c.size, Total: c.size})
	}
	c.finished = true
}
