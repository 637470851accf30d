package heapdump

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// Hostile dumps: sizes that ask for far more memory than the file holds,
// records made tiny to cost far more in memory than on disk. Big files are
// sparse: only the few bytes written take disk space, the rest reads as
// zeros. Each test checks the error and what reading allocated.

const (
	hostileArena uint64 = 1 << 40 // arena start of the crafted dumps
	testGOARCH          = "amd64"
)

// params64 returns an encoder with the header and a little-endian 64-bit
// params record whose arenas span arenaLen bytes.
func params64(arenaLen uint64) *dumptest.Encoder {
	return dumptest.NewEncoder().U(tagParams, 0, 8, hostileArena, hostileArena+arenaLen).
		S([]byte(testGOARCH)).S([]byte("go1.26.0")).U(2)
}

// sparseFile writes b at offset 0 and tail at offset at, and makes the
// file size bytes long, most of it a hole.
func sparseFile(t *testing.T, b []byte, at int64, tail []byte, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hostile.heapdump")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if tail != nil {
		if _, err := f.WriteAt(tail, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("cannot make a %d-byte sparse file here: %v", size, err)
	}
	return path
}

// allocated runs fn and returns the bytes it allocated (and the heap it
// left in use, which counts too, for fn may keep what it read).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// wantFormatError checks that err is a *FormatError at offset off whose
// message contains msg.
func wantFormatError(t *testing.T, err error, off int64, msg string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v, want a *FormatError", err)
	}
	if fe.Offset != off || !strings.Contains(fe.Msg, msg) {
		t.Fatalf("error %v, want offset %d and %q", err, off, msg)
	}
}

// loadAlloc loads path and returns the graph or error and the bytes
// allocated.
func loadAlloc(t *testing.T, path string) (*Graph, error, uint64) {
	t.Helper()
	var g *Graph
	var err error
	n := allocated(func() { g, err = Load(path, Options{}) })
	if g != nil {
		t.Cleanup(func() { g.Close() })
	}
	return g, err, n
}

// readerAlloc bounds what the reader's own buffers take: the read-ahead
// buffers of a big file, 4 of 2.5 MiB, and some.
const readerAlloc = 16 << 20

// A memory profile bucket whose stack depth would need 400 GB of
// positions, in a 57-byte dump made 32 GiB long by a hole: refused at the
// depth, which is more than the runtime ever writes, with nothing
// allocated for it.
func TestHostileStackDepth(t *testing.T) {
	e := params64(1 << 20)
	e.U(tagMemProf, 0x1000, 16)
	off := int64(len(e.B))
	nstk := uint64(10 << 30) // 10G positions of 40 bytes
	e.U(nstk)
	path := sparseFile(t, e.B, 0, nil, 32<<30)
	_, err, n := loadAlloc(t, path)
	wantFormatError(t, err, off, "stack depth 10737418240 is more than the runtime's 1024")
	if n > readerAlloc {
		t.Errorf("allocated %d bytes", n)
	}
}

// A frame of 8 GiB, more than a goroutine stack can be: refused at its
// length.
func TestHostileFrame(t *testing.T) {
	e := params64(1 << 20)
	e.U(tagGoroutine, 0xc000001000, 0xc000100000, 1, 0x401000, 4, 0, 0, 0).S([]byte("chan receive")).U(0, 0, 0, 0)
	e.U(tagStackFrame, 0xc000100000, 0, 0)
	off := int64(len(e.B))
	e.U(8 << 30)
	path := sparseFile(t, e.B, 0, nil, 9<<30)
	_, err, n := loadAlloc(t, path)
	wantFormatError(t, err, off, "more than the largest stack (1073741824 bytes)")
	if n > readerAlloc {
		t.Errorf("allocated %d bytes", n)
	}
}

// An object of 8 GiB (a hole) whose last word points to its second word:
// read without reading or keeping its contents, and re-read with a limit,
// with none (at most MaxRead bytes) and with Word.
func TestHostileObject(t *testing.T) {
	const size = 8 << 30
	e := params64(16 << 30)
	e.U(tagObject, hostileArena, size)
	contents := int64(len(e.B))
	end := (&dumptest.Encoder{}).
		U(0, 0, 0, 0, 0, 0, 0, 0). // the last word's 8 bytes, patched below
		U(fieldKindPtr, size-8, fieldKindEol, tagEOF).B
	copy(end, []byte{8, 0, 0, 0, 0, 1}) // hostileArena + 8, little-endian
	path := sparseFile(t, e.B, contents+size-8, end, contents+size-8+int64(len(end)))
	g, err, n := loadAlloc(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if n > readerAlloc {
		t.Errorf("Load allocated %d bytes", n)
	}
	if g.NumObjects() != 1 || g.Size(0) != size || len(g.Succ(0)) != 1 || g.Succ(0)[0] != 0 {
		t.Fatalf("%d objects, size %d, successors %v", g.NumObjects(), g.Size(0), g.Succ(0))
	}
	var rec *ObjectRecord
	n = allocated(func() {
		rec, err = g.ObjectRecord(0, 64)
		if err == nil && rec.Word(size-8) != hostileArena+8 {
			t.Errorf("Word(size-8) = %#x, want %#x", rec.Word(size-8), hostileArena+8)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Contents) != 64 || len(rec.PtrOffsets) != 1 || rec.PtrOffsets[0] != size-8 {
		t.Errorf("ObjectRecord(0, 64): %d bytes of contents, pointers at %v", len(rec.Contents), rec.PtrOffsets)
	}
	if rec.Word(size) != 0 || rec.Word(-8) != 0 {
		t.Errorf("Word out of range is not 0")
	}
	if n > 1<<20 {
		t.Errorf("ObjectRecord and Word allocated %d bytes", n)
	}
	n = allocated(func() {
		rec, err = g.ObjectRecord(0, 0)
		if err == nil && (rec.All().Len() != size || rec.All().Word(size-8) != hostileArena+8) {
			t.Errorf("All(): %d bytes, last word %#x", rec.All().Len(), rec.All().Word(size-8))
		}
	})
	if err != nil || len(rec.Contents) != MaxRead {
		t.Fatalf("ObjectRecord(0, 0): %v, %d bytes of contents, want %d", err, len(rec.Contents), MaxRead)
	}
	if n > 1<<20 {
		t.Errorf("ObjectRecord(0, 0) allocated %d bytes", n)
	}
}

// The runtime writes one data and one bss record: a second one is refused.
func TestHostileSegments(t *testing.T) {
	e := params64(1 << 20)
	seg := make([]byte, 1024)
	e.U(tagData, 0x500000).S(seg).Fields(nil)
	e.U(tagBSS, 0x600000).S(seg).Fields(nil)
	off := int64(len(e.B))
	e.U(tagData, 0x700000).S(seg).Fields(nil)
	e.U(tagEOF)
	_, err := readBytes(e.B)
	wantFormatError(t, err, off, "second data segment record")
}

// Segments of 1 GiB in a sparse file, a data and a bss one whose last
// words point to an object: their contents stay in the file, only the
// pointers are read, and the object is live. A second data segment is
// refused.
func TestHostileSegmentsSparse(t *testing.T) {
	const gib = 1 << 30
	write := func(tags ...uint64) (string, []int64) {
		path := filepath.Join(t.TempDir(), "segments.heapdump")
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		at := int64(0)
		put := func(b []byte) {
			if _, err := f.WriteAt(b, at); err != nil {
				t.Fatal(err)
			}
			at += int64(len(b))
		}
		put(params64(1<<20).U(tagObject, hostileArena).S(make([]byte, 8)).Fields(nil).B)
		var offs []int64
		for i, tag := range tags {
			offs = append(offs, at)
			put((&dumptest.Encoder{}).U(tag, uint64(0x500000+i*2*gib), gib).B)
			at += gib - 8 // a hole
			put(binary.LittleEndian.AppendUint64(nil, hostileArena))
			put((&dumptest.Encoder{}).Fields([]uint64{gib - 8}).B)
		}
		put((&dumptest.Encoder{}).U(tagEOF).B)
		return path, offs
	}
	path, _ := write(tagData, tagBSS)
	g, err, n := loadAlloc(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if n > readerAlloc {
		t.Errorf("Load allocated %d bytes", n)
	}
	for _, s := range g.Dump().Segments {
		if s.Size != gib || s.Contents.Len() != gib || s.Contents.Word(gib-8) != hostileArena || s.Contents.Word(gib-4) != 0 {
			t.Errorf("%s segment: %d bytes, last word %#x", s.Kind, s.Contents.Len(), s.Contents.Word(gib-8))
		}
	}
	if len(g.Dump().Segments) != 2 || !g.Live(0) {
		t.Errorf("%d segments; the object they point to live: %v", len(g.Dump().Segments), g.Live(0))
	}
	path, offs := write(tagData, tagBSS, tagData)
	_, err, n = loadAlloc(t, path)
	wantFormatError(t, err, offs[2], "second data segment record")
	if n > readerAlloc {
		t.Errorf("Load of a refused dump allocated %d bytes", n)
	}
}

// withBudget sets the budget of the records other than objects for the
// rest of the test.
func withBudget(t *testing.T, base int64, perByte float64) {
	b, p := sideBudgetBase, sideBudgetPerByte
	sideBudgetBase, sideBudgetPerByte = base, perByte
	t.Cleanup(func() { sideBudgetBase, sideBudgetPerByte = b, p })
}

// Records made as small as they can be, by the hundred thousand: each
// costs tens of times its size in memory (an other root 3 bytes on disk,
// a Root, RootSlot and node in memory). The reader stops at its budget, so
// memory stays a bounded multiple of the file's size.
func TestHostileTinyRecords(t *testing.T) {
	const count = 50_000
	gor := func(e *dumptest.Encoder, i int) {
		e.U(tagGoroutine, 0xc000001000+uint64(i)*8, 0, uint64(i), 0, 4, 0, 0, 0).S(nil).U(0xc000000000, 0, 0, 0)
	}
	tests := []struct {
		name   string
		record func(e *dumptest.Encoder, i int)
	}{
		{"other root", func(e *dumptest.Encoder, i int) { e.U(tagOtherRoot).S(nil).U(hostileArena) }},
		{"finalizer", func(e *dumptest.Encoder, i int) { e.U(tagFinalizer, hostileArena, 0, 0, 0, 0) }},
		{"queued finalizer", func(e *dumptest.Encoder, i int) { e.U(tagQueuedFinalizer, hostileArena, 0, 0, 0, 0) }},
		{"type", func(e *dumptest.Encoder, i int) { e.U(tagType, uint64(i), 0).S(nil).U(0) }},
		{"itab", func(e *dumptest.Encoder, i int) { e.U(tagItab, uint64(i), 0) }},
		{"thread", func(e *dumptest.Encoder, i int) { e.U(tagOSThread, 0, 0, 0) }},
		{"defer", func(e *dumptest.Encoder, i int) { e.U(tagDefer, 0, 0, 0, 0, 1, 0, 0) }},
		{"panic", func(e *dumptest.Encoder, i int) { e.U(tagPanic, 0, 0, 0, 0, 0, 0) }},
		{"memprof bucket", func(e *dumptest.Encoder, i int) { e.U(tagMemProf, uint64(i), 0, 0, 0, 0) }},
		{"memprof frames", func(e *dumptest.Encoder, i int) {
			if i%1024 == 0 {
				e.U(tagMemProf, uint64(i), 0, 1024)
			}
			e.S(nil).S(nil).U(uint64(i % 100))
			if i%1024 == 1023 {
				e.U(0, 0)
			}
		}},
		{"alloc sample", func(e *dumptest.Encoder, i int) { e.U(tagAllocSample, hostileArena, 0) }},
		{"goroutine", gor},
		{"object runs", func(e *dumptest.Encoder, i int) {
			// Sizes 8 and 16 by turns: every object starts a group.
			n := uint64(8 + 8*(i%2))
			e.U(tagObject, hostileArena+8+uint64(i)*16).S(make([]byte, n)).Fields(nil)
		}},
		{"zero frames", func(e *dumptest.Encoder, i int) {
			if i == 0 {
				gor(e, 0)
			}
			e.U(tagStackFrame, 0, uint64(i), 0).S(nil).U(0, 0, 0).S(nil).Fields(nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := params64(1 << 30)
			e.U(tagObject, hostileArena).S(make([]byte, 8)).Fields(nil)
			for i := range count {
				tt.record(e, i)
			}
			e.U(tagEOF)
			withBudget(t, 64<<10, 1.5)
			var err error
			n := allocated(func() { _, err = readBytes(e.B) })
			var me *MemoryLimitError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), "would take more than") || me.Offset <= 0 || me.Offset >= int64(len(e.B)) {
				t.Fatalf("%d bytes: error %v, want the budget's at an offset of the dump", len(e.B), err)
			}
			limit := sideLimit(int64(len(e.B)))
			// What the reader keeps is under the budget. Growing a slice
			// by append, 1.25 times at a time, allocates about five
			// times its final size in all (of which at most 2.25 times
			// at once): the bound is on the total.
			if max := 8*uint64(limit) + 1<<20; n > max {
				t.Errorf("%d-byte dump: allocated %d bytes, want at most %d (8 times the budget of %d, and 1 MiB)", len(e.B), n, max, limit)
			}
			t.Logf("%d-byte dump, budget %d: allocated %d bytes, %v", len(e.B), limit, n, err)
		})
	}
}

// Goroutines without a closure to start are no roots, and the graph
// reserves no room for them: a million of them, each a 40-byte record the
// budget counts, took 150 MB more of roots and root slots, all resident
// once zeroed.
func TestGoroutinesWithoutClosureReserveNoRoots(t *testing.T) {
	const count = 100_000
	e := params64(1 << 20)
	e.U(tagObject, hostileArena).S(make([]byte, 8)).Fields(nil)
	for i := range count {
		ctxt := uint64(0)
		if i%1000 == 0 {
			ctxt = hostileArena
		}
		e.U(tagGoroutine, 0xc000001000+uint64(i)*8, 0, uint64(i), 0, 4, 0, 0, 0).S(nil).U(ctxt, 0, 0, 0)
	}
	e.U(tagEOF)
	g, err := readBytes(e.B)
	if err != nil {
		t.Fatal(err)
	}
	roots := 0
	g.ForEachRoot(func(r *Root) bool {
		if r.Kind == RootGoroutine {
			roots++
		}
		return true
	})
	if roots != count/1000 {
		t.Errorf("%d goroutine roots, want %d", roots, count/1000)
	}
	if c := cap(g.roots); c > 2*count/1000+64 {
		t.Errorf("room for %d roots, want at most %d", c, 2*count/1000+64)
	}
	if c := cap(g.rootSlots); c > 2*count/1000+64 {
		t.Errorf("room for %d root slots, want at most %d", c, 2*count/1000+64)
	}
}

// A frame's pointer offsets come in two ascending runs, its outargs then
// its locals: a third run is refused, so reading the slots' words moves
// through a frame at most twice.
func TestHostileFrameRuns(t *testing.T) {
	e := params64(1 << 20)
	e.U(tagGoroutine, 0xc000001000, 0xc000100000, 1, 0x401000, 4, 0, 0, 0).S([]byte("chan receive")).U(0, 0, 0, 0)
	e.U(tagStackFrame, 0xc000100000, 0, 0).S(make([]byte, 64)).U(0x401000, 0x401010, 0x401010).S([]byte("main.f"))
	e.U(fieldKindPtr, 8, fieldKindPtr, 16, fieldKindPtr, 0, fieldKindPtr, 24, fieldKindPtr)
	off := int64(len(e.B))
	e.U(8).U(fieldKindEol, tagEOF)
	_, err := readBytes(e.B)
	wantFormatError(t, err, off, "field offset 8 does not follow the previous one")
}

// One run of 8-byte objects, each pointing to the next: the run shares one
// group, so only the objects' nodes and edges cost memory, about three
// times the file's size once package heap's arrays (NodeBytes, EdgeBytes)
// are counted. The budget covers the whole run: it takes the dump without
// the caller's arrays and refuses it with them, having allocated a bounded
// multiple of the budget.
func TestHostileObjectRun(t *testing.T) {
	const count = 50_000
	e := params64(1 << 30)
	obj := make([]byte, 8)
	for i := range count {
		addr := hostileArena + uint64(i)*8
		binary.LittleEndian.PutUint64(obj, addr+8)
		e.U(tagObject, addr).S(obj).Fields([]uint64{0})
	}
	e.U(tagEOF)
	size := int64(len(e.B))
	withBudget(t, 64<<10, 1.5)
	limit := sideLimit(size)
	// The estimate the budget checks, as the parser counts it.
	total := func(nodeBytes, edgeBytes int64) int64 {
		return count*(graphNodeCost+nodeBytes) + (count-1)*(graphEdgeCost+edgeBytes)
	}
	const nodeBytes, edgeBytes = 45, 16
	if total(0, 0) > limit/2 || total(nodeBytes, edgeBytes) < 2*limit {
		t.Fatalf("%d-byte dump, budget %d: the graph alone should take well under it (%d), with the caller's arrays well over (%d)",
			size, limit, total(0, 0), total(nodeBytes, edgeBytes))
	}

	g, err := readBytes(e.B)
	if err != nil {
		t.Fatalf("without the caller's arrays: %v", err)
	}
	if s := g.Stats(); s.Objects != count || s.Edges != count-1 {
		t.Fatalf("%d objects and %d edges, want %d and %d", s.Objects, s.Edges, count, count-1)
	}

	var opts = Options{NodeBytes: nodeBytes, EdgeBytes: edgeBytes}
	n := allocated(func() { _, err = Read(bytes.NewReader(e.B), size, "dump.bin", opts) })
	var fe *MemoryLimitError
	if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset >= size || e.B[fe.Offset] != tagObject || fe.Limit != limit || fe.Size != size || !strings.Contains(err.Error(), "the limit for a dump of its size") {
		t.Fatalf("with the caller's arrays: error %v, want the budget's at an object record", err)
	}
	// Refused at the object where the estimate passes the budget, give or
	// take one read-buffer's worth of objects read by the fast path.
	perObject := (size - 64) / count
	at := (limit / (graphNodeCost + nodeBytes + graphEdgeCost + edgeBytes)) * perObject
	if fe.Offset < at-int64(chunk) || fe.Offset > at+int64(chunk) {
		t.Errorf("refused at offset %d, want about %d (the object at which the estimate passes %d bytes)", fe.Offset, at, limit)
	}
	if max := 8*uint64(limit) + 1<<20; n > max {
		t.Errorf("allocated %d bytes, want at most %d", n, max)
	}
	t.Logf("%d-byte dump, budget %d, estimate %d: refused at offset %d, allocated %d bytes", size, limit, total(nodeBytes, edgeBytes), fe.Offset, n)
}

// Memory profile buckets at the runtime's full depth, 1024 frames of 3
// bytes each: the positions take 13 times the file, which the budget
// counts, and reading allocates them once, with no garbage of growing
// stacks (which took the process past its memory target).
func TestHostileDeepBuckets(t *testing.T) {
	const buckets, depth = 2000, 1024
	e := params64(1 << 20)
	for i := range uint64(buckets) {
		e.U(tagMemProf, 0x1000+i*8, 16, depth)
		for range depth {
			e.S([]byte("f")).S([]byte("x.go")).U(1)
		}
		e.U(1, 0)
	}
	e.U(tagEOF)
	path := filepath.Join(t.TempDir(), "buckets.heapdump")
	if err := os.WriteFile(path, e.B, 0o600); err != nil {
		t.Fatal(err)
	}
	g, err, got := loadAlloc(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.Dump().Buckets); n != buckets {
		t.Fatalf("%d buckets", n)
	}
	positions := uint64(buckets * depth * unsafe.Sizeof(binsym.Position{}))
	if limit := positions*5/4 + readerAlloc; got > limit {
		t.Errorf("reading %d positions (%d MiB) allocated %d MiB, over %d", buckets*depth, positions>>20, got>>20, limit>>20)
	}
}

// Buckets' stacks are cut from shared arrays: each keeps its own frames,
// and appending to one cannot write over the next.
func TestBucketStacksApart(t *testing.T) {
	const buckets = 3 * stackChunk / 4
	e := params64(1 << 20)
	depth := func(i int) int { return 1 + i%9 }
	for i := range buckets {
		e.U(tagMemProf, 0x1000+uint64(i)*8, 16, uint64(depth(i)))
		for d := range depth(i) {
			e.S([]byte(fmt.Sprintf("f%d", i))).S([]byte("x.go")).U(uint64(d + 1))
		}
		e.U(1, 0)
	}
	e.U(tagEOF)
	g, err := readBytes(e.B)
	if err != nil {
		t.Fatal(err)
	}
	bs := g.Dump().Buckets
	if len(bs) != buckets {
		t.Fatalf("%d buckets, want %d", len(bs), buckets)
	}
	for i, b := range bs {
		if len(b.Stack) != depth(i) || cap(b.Stack) != len(b.Stack) {
			t.Fatalf("bucket %d: %d frames, room for %d, want %d", i, len(b.Stack), cap(b.Stack), depth(i))
		}
		for d, pos := range b.Stack {
			if pos.Function != fmt.Sprintf("f%d", i) || pos.Line != d+1 {
				t.Fatalf("bucket %d frame %d: %v", i, d, pos)
			}
		}
	}
}

// Options.MemoryLimit replaces the default budget: a dump it refuses under
// a small limit reads under a large one, and the error says which limit.
func TestMemoryLimitOption(t *testing.T) {
	d := progDump(t, "-gc=false")
	b := d.bytes(t)
	size := int64(len(b))
	_, err := Read(bytes.NewReader(b), size, "dump.bin", Options{MemoryLimit: 64 << 10})
	var me *MemoryLimitError
	if !errors.As(err, &me) || me.Limit != 64<<10 || me.Size != size ||
		me.Offset <= 0 || me.Offset >= size || !strings.Contains(err.Error(), "the limit given") {
		t.Fatalf("under a 64 KiB limit: %v, want a *MemoryLimitError of the limit given", err)
	}
	if _, err := Read(bytes.NewReader(b), size, "dump.bin", Options{MemoryLimit: 4 * DefaultMemoryLimit(size)}); err != nil {
		t.Fatalf("under 4 times the default limit: %v", err)
	}
	if DefaultMemoryLimit(size) != 128<<20+size*3/2 {
		t.Errorf("default limit %d for %d bytes, want 128 MiB plus 1.5 times", DefaultMemoryLimit(size), size)
	}
}

// Other roots, 3 bytes each, past an 8 GiB object in a hole: the budget
// grows with the bytes the file holds, not with the size the hole gives
// it, so they are refused as they would be without the hole.
func TestHostileSparseBudget(t *testing.T) {
	const big = 8 << 30
	e := params64(16<<30).U(tagObject, hostileArena, big)
	at := int64(len(e.B)) + big
	roots := (&dumptest.Encoder{}).U(fieldKindEol)
	for range 200_000 {
		roots.U(tagOtherRoot).S(nil).U(hostileArena)
	}
	roots.U(tagEOF)
	size := at + int64(len(roots.B))
	path := sparseFile(t, e.B, at, roots.B, size)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	held := heldBytes(f, size)
	f.Close()
	if held == size {
		t.Skip("the file system reports no holes")
	}
	if real := int64(len(e.B) + len(roots.B)); held < real || held > real+1<<20 {
		t.Fatalf("%d bytes held in a file of %d that holds %d", held, size, len(e.B)+len(roots.B))
	}
	withBudget(t, 1<<20, 1.5)
	_, err, _ = loadAlloc(t, path)
	var me *MemoryLimitError
	if !errors.As(err, &me) || me.Held != held || me.Size != size || me.Default() != DefaultMemoryLimit(held) {
		t.Fatalf("%v, want a *MemoryLimitError of a %d-byte dump holding %d", err, size, held)
	}
	if !strings.Contains(me.Error(), "the limit for a dump of its size") {
		t.Errorf("error %q", me.Error())
	}
}
