package heap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// minimizedDump cuts a real dump down to a few records of every kind, so
// the fuzzer starts from real structure at a size it can mutate quickly:
// a dozen small objects, the goroutine blocked in waitHeld with its
// frames, the first 64 bytes of the data and bss segments.
func minimizedDump(t testing.TB) []byte {
	b := progDump(t, "-small").bytes(t)
	recs, err := walkDump(b)
	if err != nil {
		t.Fatal(err)
	}
	// The goroutine whose frames include main.waitHeld.
	keepG := -1
	for i, r := range recs {
		if r.tag == tagStackFrame && string(r.fields[7].s) == "main.waitHeld" {
			for keepG = i; recs[keepG].tag != tagGoroutine; keepG-- {
			}
		}
	}
	// Objects the kept goroutine's frames point into stay, so the seed has
	// frame roots.
	var framePtrs []uint64
	for i := keepG + 1; i < len(recs) && recs[i].tag == tagStackFrame; i++ {
		contents := recs[i].fields[3].s
		for _, o := range recs[i].fields[8].ptrs {
			framePtrs = append(framePtrs, binary.LittleEndian.Uint64(contents[o:]))
		}
	}
	pointedTo := func(r rawRecord) bool {
		addr, size := r.fields[0].u, uint64(len(r.fields[1].s))
		return slices.ContainsFunc(framePtrs, func(v uint64) bool { return v >= addr && v-addr < size })
	}
	e := newEncoder()
	count := map[uint64]int{}
	inG := false
	for i, r := range recs {
		switch r.tag {
		case tagGoroutine:
			inG = i == keepG
		case tagStackFrame, tagDefer, tagPanic:
		default:
			inG = false
		}
		switch r.tag {
		case tagObject:
			if len(r.fields[1].s) > 128 || count[r.tag] >= 12 && !pointedTo(r) {
				continue
			}
		case tagType, tagItab, tagOSThread, tagMemProf, tagAllocSample, tagFinalizer, tagQueuedFinalizer:
			if count[r.tag] >= 2 {
				continue
			}
		case tagGoroutine, tagStackFrame, tagDefer, tagPanic:
			if !inG {
				continue
			}
		case tagData, tagBSS:
			contents := r.fields[1].s[:min(64, len(r.fields[1].s))]
			var ptrs []uint64
			for _, o := range r.fields[2].ptrs {
				if o < uint64(len(contents)) {
					ptrs = append(ptrs, o)
				}
			}
			e.u(r.tag, r.fields[0].u).s(contents).fields(ptrs)
			continue
		}
		count[r.tag]++
		e.record(r)
	}
	return e.b
}

// FuzzRead feeds the reader mutated dumps: it must return a graph or a
// *FormatError, never panic, and a graph must be consistent.
func FuzzRead(f *testing.F) {
	seed := minimizedDump(f)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{
			OutArgs:      func(entry uint64) (int64, bool) { return int64(entry % 64), entry%3 != 0 },
			GlobalSymbol: func(addr uint64) (string, uint64, bool) { return "g", addr &^ 63, addr%5 != 0 },
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
	nodes := g.NumObjects + len(g.Roots) + 1
	if len(g.Start) != nodes+1 || int(g.SuperRoot) != nodes-1 || int(g.Start[nodes]) != len(g.Succ) {
		t.Fatalf("CSR shape: %d objects, %d roots, len(Start) %d, len(Succ) %d", g.NumObjects, len(g.Roots), len(g.Start), len(g.Succ))
	}
	for v := 0; v < nodes; v++ {
		if g.Start[v] > g.Start[v+1] {
			t.Fatalf("Start decreases at %d", v)
		}
	}
	for _, s := range g.Succ {
		if int(s) >= nodes {
			t.Fatalf("edge to node %d of %d", s, nodes)
		}
	}
	if g.Stats.LiveObjects+g.Stats.DeadObjects != g.Stats.Objects || g.Stats.LiveBytes+g.Stats.DeadBytes != g.Stats.Bytes {
		t.Fatalf("stats %+v", g.Stats)
	}
	for i := 0; i < g.NumObjects && i < 64; i++ {
		addr := g.ObjectAddr(uint32(i))
		if j, ok := g.Find(addr); !ok || j != uint32(i) {
			t.Fatalf("Find(ObjectAddr(%d)) = %d, %v", i, j, ok)
		}
		rec, err := g.ObjectRecord(uint32(i), 64)
		if err != nil || rec.Addr != addr || rec.Size != g.NodeSize(uint32(i)) {
			t.Fatalf("ObjectRecord(%d) = %+v, %v", i, rec, err)
		}
		g.AllocSite(uint32(i))
	}
	for i := range g.Roots {
		g.RootSlots(i)
	}
	for i := range g.Frames {
		if b, err := g.FrameContents(i); err != nil || uint64(len(b)) != g.Frames[i].Size {
			t.Fatalf("FrameContents(%d): %d bytes, %v", i, len(b), err)
		}
	}
	g.FillNodeSizes(make([]uint64, nodes))
}

// The seeds themselves read cleanly.
func TestFuzzSeed(t *testing.T) {
	seed := minimizedDump(t)
	g, err := Read(bytes.NewReader(seed), int64(len(seed)), "seed.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, g)
	if g.NumObjects < 13 || len(g.Goroutines) != 1 || len(g.Frames) < 3 || len(g.Roots) == 0 || g.MemStats == nil {
		t.Errorf("seed has %d objects, %d goroutines, %d roots", g.NumObjects, len(g.Goroutines), len(g.Roots))
	}
	t.Logf("seed: %d bytes, %d objects, %d edges, %d roots", len(seed), g.NumObjects, len(g.Succ), len(g.Roots))
}

// FuzzAnalyze runs the whole holder analysis on mutated dumps, with the
// executable that wrote the seed: dominators, the report, paths, typing
// and the three output formats must never panic.
func FuzzAnalyze(f *testing.F) {
	seed := minimizedDump(f)
	f.Add(seed)
	bin, err := binsym.Open(dumpProg(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range []*binsym.Binary{nil, bin} {
			g, err := Read(bytes.NewReader(data), int64(len(data)), "fuzz.bin", loadOptions("fuzz.bin", b, nil))
			if err != nil {
				return
			}
			a, err := newAnalysis(g, b)
			if err != nil {
				t.Fatalf("analysis of a graph the reader built: %v", err)
			}
			rep, err := a.Holders(HolderOptions{MinSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := rep.WriteText(&out, PlainStyle{}); err != nil {
				t.Fatal(err)
			}
			if err := rep.Profile().Write(&out); err != nil {
				t.Fatal(err)
			}
			addrs := make([]uint64, 0, 8)
			for i := 0; i < a.NumObjects && i < 8; i++ {
				addrs = append(addrs, a.ObjectAddr(uint32(i))+1)
			}
			if _, err := a.Explain(addrs); err != nil {
				t.Fatal(err)
			}
		}
	})
}
