package heapdump

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// A dump from a 32-bit big-endian machine with a link register, written by
// hand: the paths the real (amd64) dumps do not take.
func TestBigEndian32(t *testing.T) {
	be := binary.BigEndian
	words := func(vs ...uint32) []byte {
		var b []byte
		for _, v := range vs {
			b = be.AppendUint32(b, v)
		}
		return b
	}
	e := dumptest.NewEncoder()
	e.U(tagParams, 1, 4, 0x10000, 0x20000).S([]byte("arm")).S([]byte("go1.24.0 X:foo,bar")).U(4)
	// A and B are consecutive 16-byte slots, C two slots later, D alone.
	e.U(tagObject, 0x10000).S(words(0x10014, 0, 0, 0)).Fields([]uint64{0})                          // A -> B (interior)
	e.U(tagObject, 0x10010).S(words(0, 0x1ffff, 0x30000, 0)).Fields([]uint64{4, 8})                 // B: pointers outside any object
	e.U(tagObject, 0x10040).S(words(0x10000, 0x10044, 0, 0)).Fields([]uint64{0, 4})                 // C -> A, C (itself)
	e.U(tagObject, 0x12000).S(append(make([]byte, 4092), words(0x10000)...)).Fields([]uint64{4092}) // D -> A
	e.U(tagObject, 0x13000).S(words(0x10040, 0)).Fields([]uint64{0})                                // E -> C, unreachable
	// A goroutine: frame 0 (callee, entry 0x1000) and frame 1, whose
	// outargs area at [4, 4+8) holds the callee's arguments.
	e.U(tagGoroutine, 0x9000, 0x8000, 7, 0x1234, 4, 0, 0, 0).S([]byte("chan receive")).U(0, 0, 0, 0)
	e.U(tagStackFrame, 0x8000, 0, 0).S(make([]byte, 8)).U(0x1000, 0x1010, 0x1010).S([]byte("main.callee")).Fields(nil)
	e.U(tagStackFrame, 0x8010, 1, 0x8000).S(words(0, 0x10040, 0, 0, 0x12000)).U(0x2000, 0x2020, 0x2020).S([]byte("main.caller")).Fields([]uint64{4, 16})
	e.U(tagData, 0x5000).S(words(0x10010, 0x10000)).Fields([]uint64{0, 4})
	e.U(tagBSS, 0x6000).S(words(0)).Fields([]uint64{0})
	e.U(tagFinalizer, 0x10040, 0x7000, 0x7004, 0, 0)
	e.U(tagOtherRoot).S([]byte("test root")).U(0x10018)
	e.U(tagMemProf, 0xb000, 16, 1).S([]byte("main.alloc")).S([]byte("main.go")).U(12, 3, 1)
	e.U(tagAllocSample, 0x10000, 0xb000)
	e.U(tagEOF)
	data := e.B

	outArgs := func(entry uint64) (int64, bool) { return 8, entry == 0x1000 }
	globals := func(addr uint64) (string, uint64, bool) { return "main.pair", 0x5000, addr < 0x5008 }
	g, err := Read(bytes.NewReader(data), int64(len(data)), "be32.bin", Options{OutArgs: outArgs, GlobalSymbol: globals})
	if err != nil {
		t.Fatal(err)
	}
	p := g.Dump().Params
	if !p.BigEndian || p.PtrSize != 4 || p.GOARCH != "arm" || p.GoVersion != "go1.24.0" || !slices.Equal(p.Experiments, []string{"foo", "bar"}) || p.NCPU != 4 {
		t.Errorf("params %+v", p)
	}
	if g.NumObjects() != 5 {
		t.Fatalf("%d objects", g.NumObjects())
	}
	succ := func(v NodeID) []NodeID { return g.Succ(v) }
	for v, want := range [][]NodeID{{1}, nil, {0, 2}, {0}, {2}} {
		if got := succ(NodeID(v)); !slices.Equal(got, want) {
			t.Errorf("object %d: successors %v, want %v", v, got, want)
		}
	}
	if g.Stats().Dangling != 1 { // B's 0x1ffff; 0x30000 is outside the arenas
		t.Errorf("dangling %d, want 1", g.Stats().Dangling)
	}
	for _, a := range []uint64{0x10020, 0x10030, 0x10050, 0x13008, 0xfff0} {
		if i, ok := g.Find(a); ok {
			t.Errorf("Find(%#x) = %d in a free slot or outside", a, i)
		}
	}
	type rootWant struct {
		kind   RootKind
		frame  int
		unsure bool
		symbol string
		nodes  []NodeID
	}
	want := []rootWant{
		{RootFrame, 0, false, "", []NodeID{2}},               // the callee's argument
		{RootFrame, 1, false, "", []NodeID{3}},               // the caller's local
		{RootGlobal, -1, false, "main.pair", []NodeID{1, 0}}, // one node for the symbol
		{RootFinalizer, -1, false, "", []NodeID{2}},
		{RootOther, -1, false, "", []NodeID{1}},
	}
	if g.NumRoots() != len(want) {
		t.Fatalf("%d roots: %+v", g.NumRoots(), g.roots)
	}
	for i, w := range want {
		r := g.roots[i]
		symbol := "" // a global's; an other root's name is its description
		if r.Kind == RootGlobal {
			symbol = g.RootName(&r)
		}
		if r.Kind == RootOther && g.RootName(&r) != g.Dump().OtherRoots[r.Index].Desc {
			t.Errorf("other root %d: named %q, want its description %q", i, g.RootName(&r), g.Dump().OtherRoots[r.Index].Desc)
		}
		if r.Kind != w.kind || r.Frame != w.frame || r.Unsure != w.unsure || symbol != w.symbol || !slices.Equal(succ(NodeID(g.NumObjects()+i)), w.nodes) {
			t.Errorf("root %d: %+v, successors %v; want %+v", i, r, succ(NodeID(g.NumObjects()+i)), w)
		}
	}
	if s := g.RootSlots(g.roots[0].Node)[0]; s.Frame != 1 || s.Offset != 4 || s.Addr != 0x8014 || s.Value != 0x10040 {
		t.Errorf("argument slot %+v", s)
	}
	for i := NodeID(0); i < 4; i++ {
		if !g.Live(i) {
			t.Errorf("object %d not live", i)
		}
	}
	if g.Live(4) || g.Stats().DeadObjects != 1 || g.Stats().DeadBytes != 8 || g.Stats().LiveBytes != 16*3+4096 {
		t.Errorf("stats %+v", g.Stats())
	}
	if b, ok := g.AllocSite(0); !ok || b.Stack[0].Function != "main.alloc" || b.Stack[0].Line != 12 || b.Allocs != 3 {
		t.Errorf("alloc site %+v, %v", b, ok)
	}
	rec, err := g.ObjectRecord(3, 0)
	if err != nil || rec.Addr != 0x12000 || rec.Size != 4096 || !slices.Equal(rec.PtrOffsets, []uint64{4092}) || be.Uint32(rec.Contents[4092:]) != 0x10000 {
		t.Errorf("ObjectRecord(3) = %+v, %v", rec, err)
	}
	if b, err := g.FrameContents(1); err != nil || b.Word(4) != 0x10040 {
		t.Errorf("FrameContents(1): word at 4 %#x, %v", b.Word(4), err)
	}

	// Without OutArgs the argument stays with the caller, which is unsure.
	g, err = Read(bytes.NewReader(data), int64(len(data)), "be32.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := g.roots[0]; r.Kind != RootFrame || r.Frame != 1 || !r.Unsure || !slices.Equal(succ(NodeID(g.NumObjects())), []NodeID{2, 3}) {
		t.Errorf("root 0 without OutArgs: %+v", r)
	}
	// One global root per slot without symbols.
	globalsSeen := 0
	for _, r := range g.roots {
		if r.Kind == RootGlobal {
			globalsSeen++
		}
	}
	if globalsSeen != 2 {
		t.Errorf("%d global roots without symbols, want 2", globalsSeen)
	}
}

// Objects that continue a run but come after another record start a new
// run, so ObjectRecord can read each run from its start.
func TestRunsAreConsecutiveRecords(t *testing.T) {
	e := dumptest.NewEncoder()
	e.U(tagParams, 0, 8, 0x10000, 0x20000).S([]byte("amd64")).S([]byte("go1.26.8")).U(2)
	e.U(tagObject, 0x10000).S(make([]byte, 16)).Fields(nil)
	e.U(tagItab, 0x1000, 0x2000)
	e.U(tagObject, 0x10010).S(make([]byte, 16)).Fields(nil)
	e.U(tagEOF)
	g, err := Read(bytes.NewReader(e.B), int64(len(e.B)), "runs.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := NodeID(0); i < 2; i++ {
		if rec, err := g.ObjectRecord(i, 0); err != nil || rec.Addr != 0x10000+16*uint64(i) {
			t.Errorf("ObjectRecord(%d) = %+v, %v", i, rec, err)
		}
	}
}

// Arenas too far apart for 32-bit word offsets: raw pointers are kept as
// 64-bit values until they are resolved.
func TestWideArenas(t *testing.T) {
	le := binary.LittleEndian
	words := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = le.AppendUint64(b, v)
		}
		return b
	}
	hi := uint64(1) << 45
	e := dumptest.NewEncoder()
	e.U(tagParams, 0, 8, 0x10000, hi+0x10000).S([]byte("amd64")).S([]byte("go1.26.8")).U(2)
	e.U(tagObject, 0x10000).S(words(hi+8, 0)).Fields([]uint64{0})        // -> B (interior)
	e.U(tagObject, hi).S(words(0x10000, 0x10008)).Fields([]uint64{0, 8}) // -> A, A
	e.U(tagData, 0x5000).S(words(hi)).Fields([]uint64{0})
	e.U(tagEOF)
	g, err := Read(bytes.NewReader(e.B), int64(len(e.B)), "wide.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Succ(0), []NodeID{1}) || !slices.Equal(g.Succ(1), []NodeID{0, 0}) ||
		g.Stats().LiveObjects != 2 || g.NumRoots() != 1 {
		t.Errorf("start %v, succ %v, stats %+v", g.start, g.succ, g.Stats())
	}
}
