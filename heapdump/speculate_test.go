package heapdump

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// parseWith runs a parser over the size bytes of ra, its settings changed
// by set.
func parseWith(ra io.ReaderAt, size int64, set func(*parser)) (*parser, error) {
	return parseOn(newReader(ra, size, "dump"), set)
}

// parseMapped is parseWith through a reader that maps f where files are
// mapped, released once the parser is done.
func parseMapped(f *os.File, size int64, set func(*parser)) (*parser, error) {
	r := newMappedReader(f, size, "dump", 0)
	defer r.release()
	return parseOn(r, set)
}

// parseOn runs a parser over r, its settings changed by set.
func parseOn(r *reader, set func(*parser)) (*parser, error) {
	p := newParser(r)
	p.perNode, p.perEdge = graphNodeCost, graphEdgeCost
	set(p)
	return p, p.run()
}

// sequential and speculative are parser settings: one parser, or parts
// from fractions at of the objects on, where 4 object records in a row
// are found, and stolen from 64 KiB on; groups are cut every 4 KiB in
// both.
func sequential(p *parser) { p.specMin, p.cutEvery = math.MaxInt64, 4<<10 }
func speculative(at ...float64) func(*parser) {
	return func(p *parser) {
		p.specMin, p.specAt, p.stealMin, p.cutEvery, p.syncRecords = 0, at, 64<<10, 4<<10, 4
	}
}

// smallRuns returns k values of speculateAt that start a part
// in runs of small objects of the dump p read, where it finds a
// boundary: most of dumpprog's bytes are in big payloads.
func smallRuns(t *testing.T, p *parser, k int) []float64 {
	var offs []int64
	for _, g := range p.idx.groups {
		if g.count >= 8 && g.size <= 512 {
			offs = append(offs, g.file)
		}
	}
	if len(offs) < k {
		t.Fatalf("%d runs of small objects, want %d", len(offs), k)
	}
	first := p.idx.groups[0].file
	var ats []float64
	for i := range k {
		o := offs[i*len(offs)/k]
		ats = append(ats, float64(o-first)/float64(p.r.size-first))
	}
	return ats
}

// parseDiff names the first difference between what two parsers read, or
// returns "".
func parseDiff(a, b *parser) string {
	x, y := &a.idx, &b.idx
	for _, c := range []struct {
		what string
		a, b any
	}{
		{"objects", x.n, y.n},
		{"groups", x.groups, y.groups},
		{"marks", x.marks, y.marks},
		{"slot bitmaps", x.bits, y.bits},
		{"gaps", x.gapped, y.gapped},
		{"edge counts", a.counts, b.counts},
		{"big edge counts", a.big, b.big},
		{"edges", a.edges32, b.edges32},
		{"wide edges", a.edges64, b.edges64},
		{"memory estimate", a.total(), b.total()},
		{"groups counted", a.groups, b.groups},
		{"slots", a.slots, b.slots},
		{"functions", a.funcs, b.funcs},
		{"samples", a.samples, b.samples},
		{"records", withoutSource(a.d), withoutSource(b.d)},
	} {
		if !reflect.DeepEqual(c.a, c.b) {
			return c.what
		}
	}
	return ""
}

// withoutSource returns a copy of d whose segments' contents name no
// file: parsers that agree may read the same bytes through other readers.
func withoutSource(d *Dump) *Dump {
	if d == nil {
		return nil
	}
	c := *d
	c.Segments = slices.Clone(d.Segments)
	for i := range c.Segments {
		c.Segments[i].Contents.src = nil
	}
	return &c
}

// frameFast reads every frame record of real dumps as frame's general path
// does, also when records straddle reads of 4 KiB, where it leaves them to
// the general path.
func TestFrameFastAgrees(t *testing.T) {
	defer func(c int) { chunk = c }(chunk)
	for _, args := range [][]string{nil, {"-small", "-gc=false"}} {
		data := progDump(t, args...).bytes(t)
		for _, c := range []int{chunk, 4 << 10} {
			chunk = c
			want, err := parseWith(bytes.NewReader(data), int64(len(data)), func(p *parser) { sequential(p); p.slowFrames = true })
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseWith(bytes.NewReader(data), int64(len(data)), sequential)
			if err != nil {
				t.Fatal(err)
			}
			if diff := parseDiff(want, got); diff != "" || len(got.d.Frames) < 10 {
				t.Errorf("dump %v, reads of %d bytes: %s differ, %d frames", args, c, diff, len(got.d.Frames))
			}
		}
	}
}

// Parts of a real dump, from anywhere in it, read from memory or from the
// mapped file, give what one parser reads; and their work is used, not
// dropped.
func TestSpeculationAgrees(t *testing.T) {
	d := progDump(t, "-small", "-gc=false")
	data := d.bytes(t)
	want, err := parseWith(bytes.NewReader(data), int64(len(data)), sequential)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(d.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, src := range []struct {
		name string
		ra   io.ReaderAt
	}{{"memory", bytes.NewReader(data)}, {"file", f}} {
		// Each part alone, then the three, each up to the next.
		ats := smallRuns(t, want, 3)
		adopted := 0
		for _, at := range [][]float64{ats[:1], ats[1:2], ats[2:], ats} {
			size := int64(len(data))
			progress := &progressCheck{t: t, size: size}
			got, err := parseWith(src.ra, size, func(p *parser) {
				speculative(at...)(p)
				p.r.progress = newReadProgress(size, progress.report)
			})
			if err != nil {
				t.Fatalf("%s, parts at %.2f: %v", src.name, at, err)
			}
			if diff := parseDiff(got, want); diff != "" {
				t.Errorf("%s, parts at %.2f: %s differ", src.name, at, diff)
			}
			adopted += got.adopted
			progress.check(got, fmt.Sprintf("%s, parts at %.2f", src.name, at))
		}
		if adopted < 4 {
			t.Errorf("%s: %d parts' work was used in 6", src.name, adopted)
		}
	}
}

// On damaged dumps, reading in parts ends as one parser does: the same
// error or the same records.
func TestSpeculationOnDamage(t *testing.T) {
	data := progDump(t, "-small", "-gc=false").bytes(t)
	whole, err := parseWith(bytes.NewReader(data), int64(len(data)), sequential)
	if err != nil {
		t.Fatal(err)
	}
	ats := smallRuns(t, whole, 3)
	rng := rand.New(rand.NewPCG(1, 2))
	adopted, failed := 0, 0
	const n = 24
	for i := range n {
		// Damage anywhere, or within 64 KiB after a part's start, and
		// truncations.
		at := ats[i%len(ats)]
		start := whole.idx.groups[0].file + int64(at*float64(len(data)-int(whole.idx.groups[0].file)))
		pos := func() int {
			if i%2 == 0 {
				return len(header) + rng.IntN(len(data)-len(header))
			}
			return int(start) + rng.IntN(64<<10)
		}
		b := bytes.Clone(data)
		if i%5 == 0 {
			b = b[:pos()]
		} else {
			for range 1 + i%3 {
				b[pos()] ^= byte(1 + rng.IntN(255))
			}
		}
		parts := []float64{at}
		if i%3 == 0 {
			parts = ats // the damage may fall in any of the parts
		}
		want, werr := parseWith(bytes.NewReader(b), int64(len(b)), sequential)
		got, gerr := parseWith(bytes.NewReader(b), int64(len(b)), speculative(parts...))
		switch {
		case (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error():
			t.Fatalf("damage %d: one parser: %v; two: %v", i, werr, gerr)
		case werr == nil:
			if diff := parseDiff(got, want); diff != "" {
				t.Fatalf("damage %d: %s differ", i, diff)
			}
		default:
			failed++
		}
		adopted += got.adopted
	}
	if adopted < n/4 || failed < n/8 {
		t.Errorf("%d of %d damaged dumps used a part's work, %d failed: the test needs more of both", adopted, n, failed)
	}
}

// A dump that shrinks while it is read is an error that says so, at an
// offset near where it now ends, not a crash, whether one parser reads
// it or two, and whether they copy the file or map it (where a page past
// the end faults).
func TestDumpShrinks(t *testing.T) {
	data := progDump(t, "-small", "-gc=false").bytes(t)
	whole, err := parseWith(bytes.NewReader(data), int64(len(data)), sequential)
	if err != nil {
		t.Fatal(err)
	}
	g := whole.idx.groups[len(whole.idx.groups)/2]
	path := filepath.Join(t.TempDir(), "dump")
	// A cut at a page boundary has the mapped reader fault on the next
	// page; one within a page has it read zeros up to the page's end.
	for _, cut := range []int64{int64(len(data) / 3), int64(len(data)/3) &^ (pageSize - 1), g.file + 5} {
		for _, set := range []func(*parser){sequential, speculative(0.5)} {
			for _, mapped := range []bool{false, true} {
				if err := os.WriteFile(path, data, 0o600); err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				r := newReader(f, int64(len(data)), path)
				if mapped {
					r = newMappedReader(f, int64(len(data)), path, 0)
				}
				if err := os.Truncate(path, cut); err != nil {
					t.Fatal(err)
				}
				p := newParser(r)
				set(p)
				err = p.run()
				r.release()
				f.Close()
				var fe *FormatError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), "file shrank while reading") ||
					fe.Offset < cut-2*maxBuffered || fe.Offset >= int64(len(data)) {
					t.Errorf("cut at %d, mapped %v: got %v, want the file shrank near there", cut, mapped, err)
				}
			}
		}
	}
}

// progressCheck checks the reports of Options.Progress: from 0, rising,
// within the file's size, one per 1% of it or so.
type progressCheck struct {
	t       *testing.T
	size    int64
	reports []int64
}

func (c *progressCheck) report(read, size int64) {
	if size != c.size {
		c.t.Errorf("progress: size %d, want %d", size, c.size)
	}
	c.reports = append(c.reports, read)
}

// check checks the reports once p is done, and that every byte of the
// file was counted, by one of the parsers at least (but for the main
// parser's last bytes, less than a step and the end-of-dump record, which
// it had not counted yet): as
// many times as the parts p dropped and read itself, plus one, at most.
func (c *progressCheck) check(p *parser, what string) {
	c.t.Helper()
	r := c.reports
	if len(r) == 0 || r[0] != 0 || len(r) > 102 {
		c.t.Errorf("%s: progress reports %v, want 0 first, then about one per 1%%", what, r)
	}
	for i := 1; i < len(r); i++ {
		if r[i] < r[i-1] || r[i] > c.size {
			c.t.Errorf("%s: progress report %d after %d, of %d", what, r[i], r[i-1], c.size)
		}
	}
	pr := p.r.progress
	most := c.size * int64(1+p.help.made-p.adopted)
	// The end-of-dump record is a tag of up to MaxVarintLen64 bytes.
	if n := pr.read.Load(); n < c.size-pr.step-(binary.MaxVarintLen64-1) || n > most {
		c.t.Errorf("%s: %d bytes counted, want the file's %d (less a step of %d), at most %d (%d parts, %d adopted)",
			what, n, c.size, pr.step, most, p.help.made, p.adopted)
	}
}
