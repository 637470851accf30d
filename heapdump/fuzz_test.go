package heapdump

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// fuzzStackObjects makes up stack objects from a function's entry: locals
// and arguments, in the frame or past it, with pointers or without.
func fuzzStackObjects(entry uint64) []binsym.StackObject {
	if entry%4 == 0 {
		return nil
	}
	return []binsym.StackObject{
		{Off: -int64(entry%64) - 8, Size: 16, PtrBytes: 16, Mask: []byte{3}},
		{Off: int64(entry % 32), Size: 8, PtrBytes: 8, Mask: []byte{1}},
		{Off: -1 << 20, Size: 1 << 30, PtrBytes: 1 << 30, Mask: []byte{0xff}},
	}
}

// FuzzRead feeds the reader mutated dumps: it must return a graph or a
// *FormatError, never panic, and a graph must be consistent. Reading the
// objects in parts, from points the input's length picks, and stealing,
// and the frames by frameFast, must end as one parser does with frame's
// general path alone.
func FuzzRead(f *testing.F) {
	seed := dumptest.Minimized(f)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		one, err1 := parseWith(bytes.NewReader(data), int64(len(data)), func(p *parser) { p.specMin, p.cutEvery, p.slowFrames = math.MaxInt64, 64, true })
		// agree fails the input when what p read, how, is not what one
		// parser read.
		agree := func(how string, p *parser, err error) {
			if (err1 == nil) != (err == nil) || err1 != nil && err1.Error() != err.Error() {
				t.Fatalf("one parser: %v; %s: %v", err1, how, err)
			}
			if diff := parseDiff(one, p); err1 == nil && diff != "" {
				t.Fatalf("one parser and %s: %s differ", how, diff)
			}
		}
		// Two parsers: parts from fractions of the file the input's
		// length picks.
		two := func(p *parser) {
			f := float64(len(data)%7+1) / 40
			p.specMin, p.specAt, p.stealMin, p.cutEvery, p.syncRecords = 0, []float64{f, 2 * f}, 256, 64, 2
		}
		progress := &progressCheck{t: t, size: int64(len(data))}
		copied, err := parseWith(bytes.NewReader(data), int64(len(data)), func(p *parser) {
			two(p)
			p.r.progress = newReadProgress(int64(len(data)), progress.report)
		})
		agree("two parsers", copied, err)
		if err == nil {
			progress.check(copied, "two parsers")
		}
		// Again, through a mapping of a file in memory that holds the
		// input (where there is one).
		if file := memFile(t, data); file != nil {
			defer file.Close()
			mapped, err := parseMapped(file, int64(len(data)), two)
			agree("two parsers through a mapping", mapped, err)
		}
		opts := Options{
			OutArgs:      func(entry uint64) (int64, bool) { return int64(entry % 64), entry%3 != 0 },
			GlobalSymbol: func(addr uint64) (string, uint64, bool) { return "g", addr &^ 63, addr%5 != 0 },
			StackObjects: fuzzStackObjects,
		}
		g, err := Read(bytes.NewReader(data), int64(len(data)), "fuzz.bin", opts)
		if err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				if fe.Offset < 0 || fe.Offset > int64(len(data)) {
					t.Fatalf("offset %d outside the %d-byte input: %v", fe.Offset, len(data), err)
				}
			} else if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			return
		}
		checkGraph(t, g)
	})
}

// checkGraph checks the invariants of a graph built from any input.
func checkGraph(t *testing.T, g *Graph) {
	nodes := g.NumObjects() + g.NumRoots() + 1
	if len(g.start) != nodes+1 || int(g.SuperRoot()) != nodes-1 || int(g.start[nodes]) != len(g.succ) {
		t.Fatalf("CSR shape: %d objects, %d roots, len(Start) %d, len(Succ) %d", g.NumObjects(), g.NumRoots(), len(g.start), len(g.succ))
	}
	for v := 0; v < nodes; v++ {
		if g.start[v] > g.start[v+1] {
			t.Fatalf("Start decreases at %d", v)
		}
	}
	for _, s := range g.succ {
		if int(s) >= nodes {
			t.Fatalf("edge to node %d of %d", s, nodes)
		}
	}
	if g.Stats().LiveObjects+g.Stats().DeadObjects != g.Stats().Objects || g.Stats().LiveBytes+g.Stats().DeadBytes != g.Stats().Bytes {
		t.Fatalf("stats %+v", g.Stats())
	}
	for i := 0; i < g.NumObjects() && i < 64; i++ {
		addr := g.ObjectAddr(NodeID(i))
		if j, ok := g.Find(addr); !ok || j != NodeID(i) {
			t.Fatalf("Find(ObjectAddr(%d)) = %d, %v", i, j, ok)
		}
		rec, err := g.ObjectRecord(NodeID(i), 64)
		if err != nil || rec.Addr != addr || rec.Size != g.Size(NodeID(i)) {
			t.Fatalf("ObjectRecord(%d) = %+v, %v", i, rec, err)
		}
		g.AllocSite(NodeID(i))
	}
	// The same records read forward in one pass, every third object.
	var every3 []NodeID
	for i := 0; i < g.NumObjects() && i < 192; i += 3 {
		every3 = append(every3, NodeID(i))
	}
	err := g.ObjectWords(every3, 8, func(v NodeID, word uint64) error {
		rec, err := g.ObjectRecord(v, 0)
		if err != nil {
			t.Fatalf("ObjectRecord(%d) after ObjectWords read it: %v", v, err)
		}
		if want := rec.Word(8); word != want {
			t.Fatalf("ObjectWords: object %d: word at 8 %#x, ObjectRecord's %#x", v, word, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ObjectWords: %v", err)
	}
	for i := range g.roots {
		g.RootSlots(g.roots[i].Node)
	}
	for i := range g.Dump().Frames {
		g.Dump().FrameFunc(i)
		for _, s := range g.Dump().FrameSlots(i) {
			_ = s
		}
	}
	for i := range g.Dump().Frames {
		if b, err := g.FrameContents(i); err != nil || uint64(b.Len()) != g.Dump().Frames[i].Size {
			t.Fatalf("FrameContents(%d): %d bytes, %v", i, b.Len(), err)
		}
	}
	g.FillSizes(make([]uint64, nodes))
}

// The seeds themselves read cleanly.
func TestFuzzSeed(t *testing.T) {
	seed := dumptest.Minimized(t)
	g, err := Read(bytes.NewReader(seed), int64(len(seed)), "seed.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, g)
	if g.NumObjects() < 13 || len(g.Dump().Goroutines) != 1 || len(g.Dump().Frames) < 3 || g.NumRoots() == 0 || g.Dump().MemStats == nil {
		t.Errorf("seed has %d objects, %d goroutines, %d roots", g.NumObjects(), len(g.Dump().Goroutines), g.NumRoots())
	}
	t.Logf("seed: %d bytes, %d objects, %d edges, %d roots", len(seed), g.NumObjects(), len(g.succ), g.NumRoots())
}
