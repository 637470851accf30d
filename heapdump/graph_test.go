package heapdump

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// rootsReaching returns the roots that have a slot pointing into object obj.
func rootsReaching(g *Graph, obj NodeID) []int {
	var rs []int
	for i := range g.roots {
		for _, s := range g.RootSlots(g.roots[i].Node) {
			if s.Node == obj {
				rs = append(rs, i)
				break
			}
		}
	}
	return rs
}

func find(t *testing.T, g *Graph, addr uint64) NodeID {
	t.Helper()
	i, ok := g.Find(addr)
	if !ok {
		t.Fatalf("no object at %#x", addr)
	}
	return i
}

func TestLiveBytesMatchHeapAlloc(t *testing.T) {
	d := progDump(t)
	g := d.load(t, Options{})
	want := d.val(t, "heap_alloc")
	got := g.Stats().LiveBytes
	if diff := math.Abs(float64(got) - float64(want)); diff > 0.01*float64(want) {
		t.Errorf("live bytes %d, HeapAlloc after runtime.GC() %d: off by %.2f%%", got, want, 100*diff/float64(want))
	}
	if g.Dump().MemStats == nil {
		t.Fatal("no memstats record")
	}
	if ms := g.Dump().MemStats.HeapAlloc; math.Abs(float64(got)-float64(ms)) > 0.01*float64(ms) {
		t.Errorf("live bytes %d, memstats record's HeapAlloc %d", got, ms)
	}
	if g.Stats().LiveObjects+g.Stats().DeadObjects != g.Stats().Objects || g.Stats().LiveBytes+g.Stats().DeadBytes != g.Stats().Bytes {
		t.Errorf("stats do not add up: %+v", g.Stats())
	}
	t.Logf("live %d bytes in %d objects; HeapAlloc %d; dead %d bytes in %d objects",
		got, g.Stats().LiveObjects, want, g.Stats().DeadBytes, g.Stats().DeadObjects)
}

// A goroutine blocked in waitHeld(ctx, ch), called from loopHeld, holds
// ctx in waitHeld's argument spill slots, which are in loopHeld's frame.
func TestOutArgsAttributedToCallee(t *testing.T) {
	d := progDump(t)
	ctxAddr := d.val(t, "held_ctx")
	outArgs := argsSizes(t, d.exe)

	t.Run("with OutArgs", func(t *testing.T) {
		g := d.load(t, Options{OutArgs: outArgs})
		ctx := find(t, g, ctxAddr)
		if !g.Live(find(t, g, d.val(t, "held_payload"))) {
			t.Fatal("held payload is not live")
		}
		rs := rootsReaching(g, ctx)
		if len(rs) != 1 {
			t.Fatalf("%d roots point to the held ctx, want 1", len(rs))
		}
		r := g.roots[rs[0]]
		f := g.Dump().Frames[r.Frame]
		if fn := g.Dump().FrameFunc(r.Frame); r.Kind != RootFrame || fn != "main.waitHeld" || r.Unsure {
			t.Fatalf("ctx held by %v root, frame %s, unsure %v; want the frame of main.waitHeld", r.Kind, fn, r.Unsure)
		}
		if gr := g.Dump().Goroutines[r.Goroutine]; g.Dump().WaitReason(r.Goroutine) != "chan receive" || gr.GoPC == 0 {
			t.Errorf("goroutine %+v", gr)
		}
		args, _ := outArgs(f.Entry)
		for _, s := range g.RootSlots(g.roots[rs[0]].Node) {
			if s.Node != ctx {
				continue
			}
			caller, callerFn := g.Dump().Frames[s.Frame], g.Dump().FrameFunc(s.Frame)
			// amd64: the outargs area starts at the caller's SP.
			if callerFn != "main.loopHeld" || caller.Depth != f.Depth+1 || s.Offset >= uint64(args) || s.Addr != caller.SP+s.Offset {
				t.Errorf("ctx slot at offset %d of %s (depth %d), want in [0, %d) of main.loopHeld", s.Offset, callerFn, caller.Depth, args)
			}
			// The itab word of the interface is the word before the data
			// word, and not a pointer slot: read it from the frame.
			b, err := g.FrameContents(s.Frame)
			if err != nil {
				t.Fatal(err)
			}
			if v := b.Word(int64(s.Offset)); v != ctxAddr {
				t.Errorf("frame contents at %d hold %#x, want %#x", s.Offset, v, ctxAddr)
			}
			t.Logf("main.waitHeld: %d bytes of arguments; ctx data word at offset %d of main.loopHeld's frame (SP %#x, %d bytes)",
				args, s.Offset, caller.SP, caller.Size)
			itab := b.Word(int64(s.Offset) - 8)
			typ, ok := g.Dump().Itabs[itab]
			if !ok || !strings.HasPrefix(g.Dump().Types[typ].Name, "context.") {
				t.Errorf("word before the ctx slot is %#x, not an itab of a context type (%q)", itab, g.Dump().Types[typ].Name)
			}
		}
	})

	t.Run("without OutArgs", func(t *testing.T) {
		g := d.load(t, Options{})
		rs := rootsReaching(g, find(t, g, ctxAddr))
		if len(rs) != 1 {
			t.Fatalf("%d roots point to the held ctx, want 1", len(rs))
		}
		r := g.roots[rs[0]]
		if fn := g.Dump().FrameFunc(r.Frame); fn != "main.loopHeld" || !r.Unsure || g.Dump().FrameFunc(r.Frame-1) != "main.waitHeld" {
			t.Errorf("ctx held by frame %s, unsure %v; want main.loopHeld, unsure, with callee main.waitHeld", fn, r.Unsure)
		}
	})
}

// A goroutine blocked in waitDead no longer uses its ctx: the stack maps
// say so, and the payload is garbage although it is still in the dump.
func TestDeadContextHasNoRoot(t *testing.T) {
	d := progDump(t, "-gc=false")
	g := d.load(t, Options{OutArgs: argsSizes(t, d.exe)})
	payload := find(t, g, d.val(t, "dead_payload"))
	if g.Live(payload) {
		t.Error("dead payload is live")
	}
	if rs := rootsReaching(g, payload); len(rs) > 0 {
		t.Errorf("roots %v point to the dead payload", rs)
	}
	if !g.Live(find(t, g, d.val(t, "held_payload"))) {
		t.Error("held payload is not live")
	}
	found := false
	for i := range g.Dump().Frames {
		if g.Dump().FrameFunc(i) == "main.waitDead" {
			found = true
		}
	}
	if !found {
		t.Error("no frame of main.waitDead")
	}
}

func TestGlobalRoots(t *testing.T) {
	d := progDump(t)
	payloadAddr := d.val(t, "global_payload")
	t.Run("with symbols", func(t *testing.T) {
		g := d.load(t, Options{GlobalSymbol: globalSymbols(t, d.exe)})
		rs := rootsReaching(g, find(t, g, payloadAddr))
		if len(rs) != 1 || g.RootName(&g.roots[rs[0]]) != "main.global" || g.roots[rs[0]].Kind != RootGlobal {
			t.Fatalf("payload reached from roots %v, want the global main.global", rs)
		}
		r := g.roots[rs[0]]
		for _, s := range g.RootSlots(g.roots[rs[0]].Node) {
			if s.Addr < r.Addr || s.Addr != g.segmentAddr(r.Segment)+s.Offset {
				t.Errorf("slot %+v of root %+v", s, r)
			}
		}
		// One root node per symbol.
		seen := map[string]bool{}
		for _, r := range g.roots {
			if name := g.RootName(&r); r.Kind == RootGlobal && name != "" {
				if seen[name] {
					t.Errorf("two roots for %s", name)
				}
				seen[name] = true
			}
		}
	})
	t.Run("without symbols", func(t *testing.T) {
		g := d.load(t, Options{})
		rs := rootsReaching(g, find(t, g, payloadAddr))
		if len(rs) != 1 {
			t.Fatalf("payload reached from roots %v", rs)
		}
		r := g.roots[rs[0]]
		slots := g.RootSlots(g.roots[rs[0]].Node)
		if g.RootName(&r) != "" || len(slots) != 1 || r.Addr != slots[0].Addr {
			t.Errorf("root %+v with slots %+v, want one slot at the root's address", r, slots)
		}
	})
}

func (g *Graph) segmentAddr(k SegmentKind) uint64 {
	for _, s := range g.Dump().Segments {
		if s.Kind == k {
			return s.Addr
		}
	}
	return 0
}

// Two unreachable objects with finalizers: after a GC one finalizer runs
// (and blocks), the other waits. Both stay in the runtime's finalizer queue
// until they return, so both are queued-finalizer roots and both payloads
// are live.
func TestFinalizerRoots(t *testing.T) {
	d := progDump(t)
	g := d.load(t, Options{})
	if len(g.Dump().QueuedFinalizers) != 2 {
		t.Fatalf("%d queued finalizers, want 2", len(g.Dump().QueuedFinalizers))
	}
	for _, name := range []string{"finalized_payload0", "finalized_payload1"} {
		p := find(t, g, d.val(t, name))
		if !g.Live(p) {
			t.Errorf("%s is not live", name)
		}
		held := 0
		for i, r := range g.roots {
			if r.Kind != RootQueuedFinalizer {
				continue
			}
			obj := g.RootSlots(g.roots[i].Node)[0].Node
			if g.RootSlots(g.roots[i].Node)[0].Field != FieldObject || g.ObjectAddr(obj) != r.Addr {
				t.Errorf("queued finalizer root %+v, slots %+v", r, g.RootSlots(g.roots[i].Node))
			}
			if slices.Contains(g.Succ(obj), p) {
				held++
			}
		}
		if held != 1 {
			t.Errorf("%s held by %d queued finalizers' objects, want 1", name, held)
		}
	}
}

func TestAllocSite(t *testing.T) {
	d := progDump(t)
	g := d.load(t, Options{})
	b, ok := g.AllocSite(find(t, g, d.val(t, "held_payload")))
	if !ok {
		t.Fatal("no alloc site for the held payload")
	}
	// The stack starts in the runtime's allocator.
	stk := slices.DeleteFunc(slices.Clone(b.Stack), func(f binsym.Position) bool { return strings.HasPrefix(f.Function, "runtime.") })
	if len(stk) < 2 || stk[0].Function != "main.makePayload" || !strings.HasSuffix(stk[0].File, "dumpprog/main.go") ||
		stk[0].Line == 0 || stk[1].Function != "main.startHeld" || b.Size != 3<<20 || b.Allocs != 1 {
		t.Errorf("alloc site %+v", b)
	}
}

// Every object's address, size and edges agree with its record, read back
// from the file and walked independently.
func TestObjectsAgreeWithRecords(t *testing.T) {
	d := progDump(t, "-gc=false")
	g := d.load(t, Options{})
	recs, err := dumptest.Walk(d.bytes(t))
	if err != nil {
		t.Fatal(err)
	}
	i := NodeID(0)
	for _, r := range recs {
		if r.Tag != tagObject {
			continue
		}
		addr, size := r.Fields[0].U, uint64(len(r.Fields[1].S))
		if a := g.ObjectAddr(i); a != addr || g.Size(i) != size {
			t.Fatalf("object %d: %#x size %d, record says %#x size %d", i, a, g.Size(i), addr, size)
		}
		for _, a := range []uint64{addr, addr + size/2, addr + size - 1} {
			if j, ok := g.Find(a); !ok || j != i {
				t.Fatalf("Find(%#x) = %d, %v; want object %d", a, j, ok, i)
			}
		}
		// Edges: the pointer fields that point into objects, in order.
		var want []NodeID
		for _, o := range r.Fields[2].Ptrs {
			if j, ok := g.Find(binary.LittleEndian.Uint64(r.Fields[1].S[o:])); ok {
				want = append(want, j)
			}
		}
		if got := g.Succ(i); !slices.Equal(got, want) {
			t.Fatalf("object %d at %#x: edges %v, want %v", i, addr, got, want)
		}
		if i%97 == 0 || size > maxBuffered {
			rec, err := g.ObjectRecord(i, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Contents holds at most MaxRead bytes; Word reads the rest.
			want := r.Fields[1].S
			if rec.Addr != addr || rec.Size != size || string(rec.Contents) != string(want[:min(len(want), MaxRead)]) || !slices.Equal(rec.PtrOffsets, r.Fields[2].Ptrs) {
				t.Fatalf("ObjectRecord(%d) differs from the record at offset %d", i, r.Off)
			}
			for o := int64(0); o+8 <= int64(len(want)); o += 8 * 997 {
				if w := rec.Word(o); w != binary.LittleEndian.Uint64(want[o:]) {
					t.Fatalf("ObjectRecord(%d).Word(%d) = %#x, want %#x", i, o, w, binary.LittleEndian.Uint64(want[o:]))
				}
			}
			all := rec.All()
			if all.Len() != int64(len(want)) || all.ReadAt(make([]byte, MaxRead+1), 0) == nil || all.ReadAt(make([]byte, 8), all.Len()-7) == nil {
				t.Fatalf("ObjectRecord(%d).All(): %d bytes, reads past its end or MaxRead not refused", i, all.Len())
			}
			if rec, err := g.ObjectRecord(i, 8); err != nil || len(rec.Contents) != 8 {
				t.Fatalf("ObjectRecord(%d, 8): %v, %d bytes", i, err, len(rec.Contents))
			}
		}
		i++
	}
	if int(i) != g.NumObjects() {
		t.Fatalf("%d object records, graph has %d objects", i, g.NumObjects())
	}
	// Addresses between objects resolve to nothing.
	addrs := make([]uint64, g.NumObjects())
	for i := range addrs {
		addrs[i] = g.ObjectAddr(NodeID(i))
	}
	slices.Sort(addrs)
	gaps := 0
	for k := 0; k+1 < len(addrs); k++ {
		i, _ := g.Find(addrs[k])
		end := addrs[k] + g.Size(i)
		if end < addrs[k+1] {
			gaps++
			if j, ok := g.Find(end); ok {
				t.Fatalf("Find(%#x) in a gap = %d", end, j)
			}
		}
	}
	if gaps == 0 {
		t.Error("no gaps between objects: free slots are not exercised")
	}
	if _, ok := g.Find(0); ok {
		t.Error("Find(0) found an object")
	}
}

// The CSR has the documented shape: objects, roots, super-root last.
func TestGraphShape(t *testing.T) {
	d := progDump(t)
	g := d.load(t, Options{OutArgs: argsSizes(t, d.exe), GlobalSymbol: globalSymbols(t, d.exe)})
	nodes := g.NumObjects() + g.NumRoots() + 1
	if len(g.start) != nodes+1 || int(g.SuperRoot()) != nodes-1 || int(g.start[nodes]) != len(g.succ) {
		t.Fatalf("%d objects, %d roots: len(Start) %d, super-root %d, Start[N] %d, len(Succ) %d",
			g.NumObjects(), g.NumRoots(), len(g.start), g.SuperRoot(), g.start[nodes], len(g.succ))
	}
	for v := 0; v < nodes; v++ {
		if g.start[v] > g.start[v+1] {
			t.Fatalf("Start not monotonic at %d", v)
		}
	}
	for _, s := range g.succ[:g.start[g.NumObjects()]] {
		if int(s) >= g.NumObjects() {
			t.Fatalf("object edge to node %d", s)
		}
	}
	for i := range g.roots {
		v := g.NumObjects() + i
		slots := g.RootSlots(g.roots[i].Node)
		succ := g.Succ(NodeID(v))
		if len(slots) == 0 || len(slots) != len(succ) {
			t.Fatalf("root %d: %d slots, %d successors", i, len(slots), len(succ))
		}
		for k, s := range slots {
			if succ[k] != s.Node || !g.Live(s.Node) {
				t.Fatalf("root %d slot %d", i, k)
			}
		}
		if g.Size(NodeID(v)) != 0 {
			t.Fatal("root node with a size")
		}
	}
	super := g.Succ(g.SuperRoot())
	if len(super) != g.NumRoots() {
		t.Fatalf("super-root has %d successors, want %d", len(super), g.NumRoots())
	}
	sizes := make([]uint64, nodes)
	g.FillSizes(sizes)
	var total uint64
	for v, s := range sizes {
		if s != g.Size(NodeID(v)) {
			t.Fatalf("FillNodeSizes[%d] = %d, NodeSize %d", v, s, g.Size(NodeID(v)))
		}
		total += s
	}
	if total != g.Stats().Bytes {
		t.Errorf("sizes add up to %d, Stats.Bytes %d", total, g.Stats().Bytes)
	}
	// Every goroutine's frames are in order, and every root kind the
	// program creates shows up.
	kinds := map[RootKind]int{}
	for _, r := range g.roots {
		kinds[r.Kind]++
	}
	for _, k := range []RootKind{RootFrame, RootGlobal, RootFinalizer, RootQueuedFinalizer} {
		if kinds[k] == 0 {
			t.Errorf("no %v roots", k)
		}
	}
	for _, gr := range g.Dump().Goroutines {
		for k, f := range g.Dump().Frames[gr.FirstFrame : gr.FirstFrame+gr.NumFrames] {
			if f.Depth != k || g.Dump().Goroutines[f.Goroutine].ID != gr.ID {
				t.Fatalf("goroutine %d frame %d: %+v", gr.ID, k, f)
			}
		}
	}
	if g.Dump().Params.PtrSize != 8 || g.Dump().Params.GOARCH == "" || !strings.HasPrefix(g.Dump().Params.GoVersion, "go1.") || len(g.Dump().Threads) == 0 || len(g.Dump().Types) == 0 {
		t.Errorf("params %+v, %d threads, %d types", g.Dump().Params, len(g.Dump().Threads), len(g.Dump().Types))
	}
}

// Resolving edges in parallel, which only large dumps do by default, and
// reads of 4 KiB, which thousands of the 24 MB dump's records straddle,
// give the same graph.
func TestParallelResolveAndSmallBuffer(t *testing.T) {
	d := progDump(t, "-gc=false")
	opts := Options{OutArgs: argsSizes(t, d.exe)}
	want := d.load(t, opts)
	defer func(e, c int) { parallelMinEdges, chunk = e, c }(parallelMinEdges, chunk)
	for _, tc := range []struct{ parallel, chunk int }{{1, chunk}, {math.MaxInt, chunk}, {parallelMinEdges, 4 << 10}} {
		parallelMinEdges, chunk = tc.parallel, tc.chunk
		got := d.load(t, opts)
		if !slices.Equal(got.start, want.start) || !slices.Equal(got.succ, want.succ) || got.Stats() != want.Stats() ||
			!slices.Equal(got.roots, want.roots) || !slices.Equal(got.rootSlots, want.rootSlots) || len(got.Dump().Frames) != len(want.Dump().Frames) {
			t.Errorf("parallelMinEdges %d, chunk %d: graph differs", tc.parallel, tc.chunk)
		}
		for i := range got.Dump().Frames {
			if !slices.Equal(got.Dump().FrameSlots(i), want.Dump().FrameSlots(i)) || got.Dump().FrameFunc(i) != want.Dump().FrameFunc(i) {
				t.Errorf("frame %d differs", i)
			}
		}
	}
}

// ObjectWords reads, in one pass, the words ObjectRecord reads one by one:
// for every object, every third (reading on past the ones skipped) and
// every 40th (jumping to marks), at the first and the last word and past
// the end; and refuses objects out of order.
func TestObjectWordsAgreeWithObjectRecord(t *testing.T) {
	d := progDump(t, "-gc=false")
	g := d.load(t, Options{})
	for _, step := range []int{1, 3, 40, 1000} {
		var vs []NodeID
		for v := 0; v < g.NumObjects(); v += step {
			vs = append(vs, NodeID(v))
		}
		for _, last := range []bool{false, true} {
			n, checked := 0, 0
			err := g.ObjectWords(vs, 0, func(v NodeID, word uint64) error {
				if v != vs[n] {
					t.Fatalf("step %d: call %d for object %d, want %d", step, n, v, vs[n])
				}
				n++
				if step == 1 && n%11 != 0 {
					return nil // the other steps check the rest
				}
				one, err := g.ObjectRecord(v, 0)
				if err != nil {
					return err
				}
				if want := one.Word(0); word != want {
					t.Fatalf("step %d: object %d: word %#x, ObjectRecord's %#x", step, v, word, want)
				}
				if word != 0 {
					checked++
				}
				return nil
			})
			if err != nil || n != len(vs) {
				t.Fatalf("step %d: %d of %d words, %v", step, n, len(vs), err)
			}
			if step == 1 && checked == 0 {
				t.Fatalf("no object has a first word but 0")
			}
			if !last || step < 40 {
				continue
			}
			// The last word of the largest object: past the end of the others.
			size := int64(0)
			for _, v := range vs {
				size = max(size, int64(g.Size(v)))
			}
			n = 0
			err = g.ObjectWords(vs, size-8, func(v NodeID, word uint64) error {
				n++
				one, err := g.ObjectRecord(v, 0)
				if err != nil {
					return err
				}
				if want := one.Word(size - 8); word != want {
					t.Fatalf("step %d: object %d of %d bytes: word at %d %#x, ObjectRecord's %#x", step, v, g.Size(v), size-8, word, want)
				}
				return nil
			})
			if err != nil || n != len(vs) {
				t.Fatalf("step %d: %d of %d words at %d, %v", step, n, len(vs), size-8, err)
			}
		}
	}
	if err := g.ObjectWords([]NodeID{5, 3}, 0, func(NodeID, uint64) error { return nil }); err == nil || !strings.Contains(err.Error(), "increasing order") {
		t.Errorf("objects out of order: %v", err)
	}
}

// TestRecordReaderAgreesWithObjectRecord reads records through one
// RecordReader forward, backward and jumping about, and checks each
// against Graph.ObjectRecord.
func TestRecordReaderAgreesWithObjectRecord(t *testing.T) {
	d := progDump(t, "-gc=false")
	g := d.load(t, Options{})
	n := g.NumObjects()
	var order []NodeID
	for v := 0; v < n; v += 7 {
		order = append(order, NodeID(v))
	}
	for v := n - 1; v >= 0; v -= 13 {
		order = append(order, NodeID(v))
	}
	for i := range 500 {
		order = append(order, NodeID((i*7919)%n), NodeID((i*7919)%n)) // twice in a row, too
	}
	rr := g.RecordReader()
	for i, v := range order {
		limit := []int{0, 8, 64}[i%3]
		got, err := rr.ObjectRecord(v, limit)
		if err != nil {
			t.Fatalf("object %d: %v", v, err)
		}
		want, err := g.ObjectRecord(v, limit)
		if err != nil {
			t.Fatalf("object %d: %v", v, err)
		}
		if got.Addr != want.Addr || got.Size != want.Size || !bytes.Equal(got.Contents, want.Contents) || !slices.Equal(got.PtrOffsets, want.PtrOffsets) {
			t.Fatalf("object %d, limit %d: RecordReader read %#x (%d bytes, %d pointers), ObjectRecord %#x (%d bytes, %d pointers)",
				v, limit, got.Addr, got.Size, len(got.PtrOffsets), want.Addr, want.Size, len(want.PtrOffsets))
		}
		if got.Size > 8 && got.Word(int64(got.Size)-8) != want.Word(int64(want.Size)-8) {
			t.Fatalf("object %d: last words differ", v)
		}
	}
	if _, err := rr.ObjectRecord(NodeID(n), 0); err == nil {
		t.Fatal("object past the last: no error")
	}
	if _, err := rr.ObjectRecord(0, 0); err != nil {
		t.Fatalf("object 0 after an error: %v", err)
	}
}

// FindStart finds an object by its first byte only: inside it, or in no
// object, it finds nothing.
func TestFindStart(t *testing.T) {
	g := progDump(t, "-small", "-gc=false").load(t, Options{})
	inside := 0
	for v := range NodeID(g.NumObjects()) {
		a := g.ObjectAddr(v)
		if u, ok := g.FindStart(a); !ok || u != v {
			t.Fatalf("object %d at %#x: FindStart gives %d, %v", v, a, u, ok)
		}
		if g.Size(v) > 8 {
			inside++
			if u, ok := g.FindStart(a + 8); ok {
				t.Fatalf("object %d at %#x: FindStart(+8) gives %d", v, a, u)
			}
			if u, ok := g.Find(a + 8); !ok || u != v {
				t.Fatalf("object %d at %#x: Find(+8) gives %d, %v", v, a, u, ok)
			}
		}
	}
	if inside == 0 {
		t.Fatal("no object of more than a word")
	}
	if _, ok := g.FindStart(8); ok {
		t.Error("FindStart(8) found an object")
	}
}

// The parts whose edges are resolved in parallel cover the objects in
// order, none of them empty, at most k.
func TestResolveParts(t *testing.T) {
	defer func(e int) { parallelMinEdges = e }(parallelMinEdges)
	parallelMinEdges = 1
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 10, 100, 1000} {
		for _, k := range []int{1, 2, 16, 64} {
			for _, spread := range []int{0, 1, 3, 50} {
				start := make([]uint32, n+1)
				for i := range n {
					d := 0
					if spread > 0 && rng.IntN(4) == 0 {
						d = rng.IntN(spread) // most objects without edges
					}
					start[i+1] = start[i] + uint32(d)
				}
				parts := resolveParts(start, k)
				lo := 0
				for _, p := range parts {
					if p.lo != lo || p.hi <= p.lo {
						t.Fatalf("%d objects, %d parts, spread %d: parts %v", n, k, spread, parts)
					}
					lo = p.hi
				}
				if lo != n || len(parts) > k {
					t.Fatalf("%d objects, %d parts, spread %d: parts %v", n, k, spread, parts)
				}
			}
		}
	}
}
