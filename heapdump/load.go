package heapdump

import (
	"errors"
	"io"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/inputfile"
)

// Options configure how the graph's roots are built. The zero value is
// valid: roots are then attributed without help from the binary.
type Options struct {
	// OutArgs returns the size of the arguments area of the function whose
	// entry PC is given (funcInfo.args in the binary's pclntab). A callee's
	// arguments live in its caller's outargs area; with OutArgs, pointer
	// slots there are attributed to the callee frame. Without it, or when
	// it returns ok == false, they stay with the caller, whose root is then
	// marked Unsure.
	OutArgs func(calleeEntryPC uint64) (size int64, ok bool)

	// GlobalSymbol names the global variable holding addr: its symbol and
	// start address. With it there is one root node per global that holds
	// heap pointers; without it, or where it returns ok == false, one per
	// pointer slot.
	GlobalSymbol func(addr uint64) (name string, start uint64, ok bool)

	// StackObjects returns the stack objects of the function whose entry
	// PC is given (binsym.Binary.StackObjects): its address-taken locals
	// and arguments, which the stack maps leave out of a frame's slots.
	// With it, a stack object that a pointer on its goroutine's stack
	// reaches (as the garbage collector finds them) adds its pointers to
	// its frame's root, which Graph.StackObject tells. The objects
	// come in increasing order of offset, without overlaps, as the
	// runtime wants them; a function's that do not are left out.
	StackObjects func(entry uint64) []binsym.StackObject

	// Prepare, if set, is called once every record has been read and
	// before the graph is built, so that a caller can check the dump
	// against its binary (and set the binary's load bias) before OutArgs
	// and GlobalSymbol are asked anything. An error from it ends Read.
	Prepare func(d *Dump) error

	// Check, if set, is called once Prepare has returned, on another
	// goroutine while the graph is built, so that a long check of the
	// dump (every frame's function against the binary: 600,000 frames of
	// 100,000 goroutines) takes a core the build leaves idle. It must
	// only read the dump. An error from it ends Read, which waits for it.
	Check func(d *Dump) error

	// NodeBytes and EdgeBytes are the memory the caller will keep for each
	// node and each edge of the graph once it is built (package heap: its
	// dominator tree, retained sizes and searches). Read counts them with
	// its own in the memory budget of the dump, so that a dump is refused
	// before the whole run, not only the reading, would take more than the
	// budget: 128 MiB plus 1.5 times the bytes the file holds (its size
	// less the holes of a sparse file).
	NodeBytes, EdgeBytes int64

	// Progress, if set, is called as the records are read, from the
	// goroutine that called Load or Read: first with read 0, then about
	// every 1% of the file with the number of its bytes read so far (by
	// every core: an estimate, at most the file's size). Prepare follows
	// once they all are. In the rare dump that has to be read twice (two
	// spans' objects taken for one), the reports start again from 0.
	Progress func(read, size int64)

	// MemoryLimit is that budget in bytes, 0 for the default. A dump of
	// millions of tiny objects can need more than the default: its records
	// are small for what their nodes cost. A dump past it is refused with a
	// *MemoryLimitError.
	MemoryLimit int64
}

// Load reads the heap dump at path and builds its graph. The file stays open
// for reads of Contents (ObjectRecord, FrameContents) until Close. Anything but a regular
// file (a named pipe, a device) is refused with an
// *inputfile.NotRegularError, without blocking.
func Load(path string, opts Options) (*Graph, error) {
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	g, err := Read(f, fi.Size(), path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	g.closer = f
	return g, nil
}

// Read reads a heap dump of size bytes from r in one pass and builds its
// graph. name is used in errors. r must stay readable for ObjectRecord.
// Malformed input gives a *FormatError.
func Read(r io.ReaderAt, size int64, name string, opts Options) (*Graph, error) {
	g, err := read(r, size, name, opts, false)
	if err == errGapOverlap {
		// Two spans' objects were taken for one span with free slots,
		// across another span: read again without gaps in groups.
		g, err = read(r, size, name, opts, true)
	}
	return g, err
}

// errGapOverlap says that a group with free slots overlaps another group.
var errGapOverlap = errors.New("heapdump: a group with gaps overlaps another")

func read(r io.ReaderAt, size int64, name string, opts Options, noGaps bool) (*Graph, error) {
	rd := newMappedReader(r, size, name, 0)
	defer rd.release()
	rd.progress = newReadProgress(size, opts.Progress)
	p := newParser(rd)
	defer p.populating.Wait()
	p.idx.noGaps = noGaps
	p.perNode = graphNodeCost + max(opts.NodeBytes, 0)
	p.perEdge = graphEdgeCost + max(opts.EdgeBytes, 0)
	p.held = heldBytes(r, size)
	p.keptLimit = sideLimit(p.held)
	if opts.MemoryLimit > 0 {
		p.keptLimit = opts.MemoryLimit
	}
	if err := p.run(); err != nil {
		return nil, err
	}
	return build(p, opts)
}

// Close closes the file opened by Load.
func (g *Graph) Close() error {
	if g.closer == nil {
		return nil
	}
	err := g.closer.Close()
	g.closer = nil
	return err
}
