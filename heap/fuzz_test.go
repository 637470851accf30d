package heap

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"runtime"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/dumptest"
)

// FuzzAnalyze runs the whole pipeline on mutated dumps, with no executable
// and with the one that wrote the real seed: parse, dominators, groups,
// paths, typing and "made of", the text, JSON and pprof reports and
// Explain must never panic, and must allocate no more than 256 MiB plus
// 1.5 times the bytes the input holds. The file read is data with hole
// bytes of zeros inserted at offset at (up to 16 GiB): records that claim
// gigabytes of contents in the hole, cheaply. Seeds: the real dump cut
// down, an 8 GiB object a frame holds that holds another, two 1 GiB
// segments whose last words point to an object, a 1 GiB frame, and a chain
// of 20,000 objects.
func FuzzAnalyze(f *testing.F) {
	f.Add(dumptest.Minimized(f), uint32(0), uint64(0))
	for _, s := range pipelineSeeds() {
		f.Add(s.data, s.at, s.hole)
	}
	bin, err := binsym.Open(dumpProg(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, at uint32, hole uint64) {
		r := &holeReader{data: data, at: int64(min(int(at), len(data))), hole: int64(hole % (16<<30 + 1))}
		for _, b := range []*binsym.Binary{nil, bin} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			pipeline(t, r, b)
			runtime.ReadMemStats(&after)
			if n, most := after.TotalAlloc-before.TotalAlloc, 256<<20+uint64(len(data))*3/2; n > most {
				t.Fatalf("the pipeline allocated %d bytes for a %d-byte input with a %d-byte hole, more than %d", n, len(data), r.hole, most)
			}
		}
	})
}

// pipeline reads the dump r gives and writes every report of it, failing t
// on any error past the reader's.
func pipeline(t *testing.T, r *holeReader, b *binsym.Binary) {
	o := newOptions(nil)
	g, err := heapdump.Read(r, r.size(), "fuzz.bin", o.loadOptions("fuzz.bin", b))
	if err != nil {
		return
	}
	a, err := newAnalysis(g, b, o)
	if err != nil {
		t.Fatalf("analysis of a graph the reader built: %v", err)
	}
	// The report's arithmetic holds on every input (invariants_test.go).
	rep := checkedHolders(t, a, MinSize(1), Top(0))
	var out bytes.Buffer
	if err := rep.WriteText(&out, PlainStyle{}); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(js) {
		t.Fatal("the JSON report is not valid JSON")
	}
	if err := rep.Profile().Write(&out); err != nil {
		t.Fatal(err)
	}
	addrs := make([]uint64, 0, 8)
	for i := 0; i < a.g.NumObjects() && i < 8; i++ {
		addrs = append(addrs, a.g.ObjectAddr(heapdump.NodeID(i))+1)
	}
	if _, err := a.Explain(addrs); err != nil {
		t.Fatal(err)
	}
}

// holeReader reads data with hole zero bytes inserted at offset at: a
// sparse file held in memory.
type holeReader struct {
	data     []byte
	at, hole int64
}

func (h *holeReader) size() int64 { return int64(len(h.data)) + h.hole }

func (h *holeReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		pos, k := off+int64(n), 0
		switch {
		case pos < 0 || pos >= h.size():
			return n, io.EOF
		case pos < h.at:
			k = copy(p[n:], h.data[pos:h.at])
		case pos < h.at+h.hole:
			k = int(min(int64(len(p)-n), h.at+h.hole-pos))
			clear(p[n : n+k])
		default:
			k = copy(p[n:], h.data[pos-h.hole:])
		}
		n += k
	}
	return n, nil
}

// Record tags, as in src/runtime/heapdump.go.
const (
	seedObject     = 1
	seedGoroutine  = 4
	seedStackFrame = 5
	seedParams     = 6
	seedData       = 12
	seedBSS        = 13
	seedArena      = uint64(0xc000000000)
)

// pipelineSeed is one input of FuzzAnalyze.
type pipelineSeed struct {
	data []byte
	at   uint32
	hole uint64
}

// pipelineSeeds returns dumps whose records claim huge sizes, their
// contents in the hole, and a deep chain.
func pipelineSeeds() []pipelineSeed {
	params := func() *dumptest.Encoder {
		return dumptest.NewEncoder().U(seedParams, 0, 8, seedArena, seedArena+64<<30).S([]byte("amd64")).S([]byte("go1.26.0")).U(2)
	}
	le := func(words ...uint64) []byte {
		var b []byte
		for _, w := range words {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
		return b
	}
	// held appends a goroutine whose one frame points to addr.
	held := func(e *dumptest.Encoder, addr uint64) *dumptest.Encoder {
		e.U(seedGoroutine, 0xc000001000, 0xc000100000, 1, 0x401000, 4, 0, 0, 0).S([]byte("chan receive")).U(0, 0, 0, 0)
		return e.U(seedStackFrame, 0xc000100000, 0, 0).S(le(addr)).U(0x401000, 0x401010, 0x401010).S([]byte("main.hold")).Fields([]uint64{0}).U(0)
	}
	var seeds []pipelineSeed
	// An 8 GiB object whose first word points to an 8-byte object.
	const big = 8 << 30
	e := params().U(seedObject, seedArena, big)
	e.B = append(e.B, le(seedArena+big)...)
	at := len(e.B)
	e.Fields([]uint64{0}).U(seedObject, seedArena+big).S(le(0)).Fields(nil)
	seeds = append(seeds, pipelineSeed{held(e, seedArena).B, uint32(at), big - 8})
	// A 1 GiB data segment whose last word points to an object.
	e = params().U(seedObject, seedArena).S(le(0, 0)).Fields(nil).U(seedData, 0x500000, 1<<30)
	at = len(e.B)
	e.B = append(e.B, le(seedArena)...)
	e.Fields([]uint64{1<<30 - 8}).U(seedBSS, 0x600000).S(le(seedArena + 8)).Fields([]uint64{0}).U(0)
	seeds = append(seeds, pipelineSeed{e.B, uint32(at), 1<<30 - 8})
	// A 1 GiB frame whose last word points to an object.
	e = params().U(seedObject, seedArena).S(le(0)).Fields(nil)
	e.U(seedGoroutine, 0xc000001000, 0xc000100000, 1, 0x401000, 4, 0, 0, 0).S([]byte("chan receive")).U(0, 0, 0, 0)
	e.U(seedStackFrame, 0xc000100000, 0, 0, 1<<30)
	at = len(e.B)
	e.B = append(e.B, le(seedArena)...)
	e.U(0x401000, 0x401010, 0x401010).S([]byte("main.deep")).Fields([]uint64{1<<30 - 8}).U(0)
	seeds = append(seeds, pipelineSeed{e.B, uint32(at), 1<<30 - 8})
	// A chain of 20,000 objects of 16 bytes.
	const n = 20_000
	e = params()
	for i := range uint64(n) {
		next := uint64(0)
		if i+1 < n {
			next = seedArena + (i+1)*16
		}
		e.U(seedObject, seedArena+i*16).S(le(next, 0)).Fields([]uint64{0})
	}
	seeds = append(seeds, pipelineSeed{held(e, seedArena).B, 0, 0})
	return seeds
}
