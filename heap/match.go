package heap

import (
	"fmt"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

// The reader checks that bin is the executable that wrote the dump d, and
// sets its load bias when it is a PIE, in two steps: matchSegments before
// it builds the graph, matchFrames while it does. Together they compare
// the Go version, the address, size and pointer mask of the data and bss
// segments, and the name and entry of every stack frame's function; the
// first difference is a *binsym.MismatchError.

// matchSegments checks the Go version, sets the load bias and checks the
// segments, which the reader needs before it builds the graph
// (heapdump.Options.Prepare).
func matchSegments(path string, d *heapdump.Dump, bin *binsym.Binary) error {
	wrap := func(err error) error { return fmt.Errorf("%s: %w", path, err) }
	if err := bin.MatchGoVersion(d.Params.GoVersion); err != nil {
		return wrap(err)
	}
	if bin.PIE() {
		if err := setBias(d, bin); err != nil {
			return wrap(err)
		}
	}
	for _, s := range d.Segments {
		kind := binsym.DataSegment
		if s.Kind == heapdump.SegmentBSS {
			kind = binsym.BSSSegment
		}
		if err := bin.MatchSegment(kind, s.Addr, s.Size, s.PtrOffsets); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// matchFrames checks every frame's function, while the reader builds the
// graph (heapdump.Options.Check).
func matchFrames(path string, d *heapdump.Dump, bin *binsym.Binary) error {
	frames := bin.NewFrameMatcher()
	for i, f := range d.Frames {
		if err := frames.Match(d.FrameFunc(i), f.Entry, f.PC); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// setBias sets the load bias of the PIE bin from the first frame that
// names a function: the difference between its entry in the dump and in
// the executable.
func setBias(d *heapdump.Dump, bin *binsym.Binary) error {
	for i, f := range d.Frames {
		fn := d.FrameFunc(i)
		if fn == "" || fn == "unknown function" || f.Entry == 0 {
			continue
		}
		bias, err := bin.BiasFor(fn, f.Entry)
		if err != nil {
			return err
		}
		bin.SetBias(bias)
		return nil
	}
	return nil
}
