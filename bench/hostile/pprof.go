package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"
)

// pb is a minimal protobuf encoder.
type pb struct{ b []byte }

func (p *pb) tag(field, wire int) *pb {
	p.b = binary.AppendUvarint(p.b, uint64(field<<3|wire))
	return p
}
func (p *pb) u(field int, v uint64) *pb {
	p.tag(field, 0)
	p.b = binary.AppendUvarint(p.b, v)
	return p
}
func (p *pb) bytes(field int, b []byte) *pb {
	p.tag(field, 2)
	p.b = binary.AppendUvarint(p.b, uint64(len(b)))
	p.b = append(p.b, b...)
	return p
}
func (p *pb) msg(field int, m *pb) *pb { return p.bytes(field, m.b) }
func (p *pb) packed(field int, vs ...uint64) *pb {
	var q []byte
	for _, v := range vs {
		q = binary.AppendUvarint(q, v)
	}
	return p.bytes(field, q)
}

// Profile fields (profile.proto).
const (
	pSampleType = 1
	pSample     = 2
	pLocation   = 4
	pFunction   = 5
	pString     = 6
	pPeriodType = 11
	pPeriod     = 12
)

// heapHeader returns a profile with the heap profile's sample types and
// strings 0..n-1: "", alloc_objects, count, alloc_space, bytes,
// inuse_objects, inuse_space, space, then extra.
func heapHeader(extra ...string) *pb {
	p := &pb{}
	for _, st := range [][2]uint64{{1, 2}, {3, 4}, {5, 2}, {6, 4}} {
		p.msg(pSampleType, (&pb{}).u(1, st[0]).u(2, st[1]))
	}
	for _, s := range append([]string{"", "alloc_objects", "count", "alloc_space", "bytes", "inuse_objects", "inuse_space", "space"}, extra...) {
		p.bytes(pString, []byte(s))
	}
	p.msg(pPeriodType, (&pb{}).u(1, 7).u(2, 4)).u(pPeriod, 524288)
	return p
}

// sample returns a sample with locations and values.
func sample(locs []uint64, vals ...uint64) *pb {
	s := &pb{}
	s.packed(1, locs...)
	s.packed(2, vals...)
	return s
}

func profileCases(a *assets) ([]Case, error) {
	d := filepath.Join(a.dir, "profiles")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, err
	}
	var cases []Case
	var firstErr error
	any := []int{0, 1, 2}
	const capBytes = 256 << 20
	add := func(name string, want []int, in, decompressed int64, args ...string) {
		cases = append(cases, Case{Cat: "pprof", Name: name, Args: append([]string{"analyze"}, args...), Want: want, Kind: analyzeKind,
			Input: in, Decompressed: decompressed})
	}
	file := func(name string, b []byte, want []int, extra ...string) string {
		p, err := write(d, name, b)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		add(name, want, int64(len(b)), int64(len(b)), append([]string{p}, extra...)...)
		return p
	}
	gzfile := func(name string, b []byte, want []int, extra ...string) string {
		z := gz(b)
		p, err := write(d, name+".gz", z)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		// The time limit follows the decompressed size.
		add(name+".gz", want, int64(len(b)), int64(len(b)), append([]string{p}, extra...)...)
		return p
	}
	// A real heap profile of this process.
	var real bytes.Buffer
	pprof.Lookup("heap").WriteTo(&real, 0)
	realPath := file("real-heap", real.Bytes(), []int{0, 1})
	var gor bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&gor, 0)
	file("real-goroutine", gor.Bytes(), []int{0, 1})
	var legacy bytes.Buffer
	pprof.Lookup("heap").WriteTo(&legacy, 1)
	file("real-heap-legacy", legacy.Bytes(), []int{0, 1})

	file("empty", nil, any)
	file("one-byte", []byte{0}, any)
	file("garbage", bytes.Repeat([]byte{0xff}, 1<<20), any)
	gzfile("gz-garbage", bytes.Repeat([]byte("\x0a\xff\xff\xff\xff\x0f"), 1<<20), any)
	// Gzip bombs, members, nesting, truncation.
	bombPath, err := write(d, "bomb-1g.gz", gzipZeros(1<<30))
	if err != nil {
		return nil, err
	}
	add("bomb-1g.gz", nil, size(bombPath), 1<<30, bombPath)
	add("bomb-1g-base", nil, size(bombPath), 1<<30, realPath, "--base", bombPath)
	// With the cap raised, the bomb is read: time and memory follow the
	// decompressed size.
	cases = append(cases, Case{Cat: "pprof", Name: "bomb-1g-maxsize-2g", Args: []string{"analyze", bombPath, "--max-profile-size", "2047MiB"},
		Kind: analyzeKind, Input: 1 << 30, Decompressed: 1 << 30, Cap: 2047 << 20})
	var members []byte
	for range 200_000 {
		members = append(members, gz(nil)...)
	}
	members = append(members, gz(real.Bytes())...)
	file("members-200k.gz", members, any)
	gzr := gz(real.Bytes())
	var split []byte
	for i := 0; i < len(real.Bytes()); i += 16 {
		split = append(split, gz(real.Bytes()[i:min(i+16, len(real.Bytes()))])...)
	}
	file("members-split.gz", split, any)
	file("gz-of-gz", gz(gzr), any)
	file("gz-x5", gz(gz(gz(gz(gzr)))), any)
	file("gz-truncated", gzr[:len(gzr)/2], any)
	file("gz-bad-crc", append(bytes.Clone(gzr[:len(gzr)-8]), 0, 0, 0, 0, 0, 0, 0, 0), any)

	// Structure: huge string tables, many samples, deep references.
	{
		p := heapHeader()
		for i := range 5_000_000 {
			p.bytes(pString, []byte{byte('a' + i%26)})
		}
		gzfile("strings-5m", p.b, any)
		p = heapHeader("main.f", "f.go")
		p.msg(pFunction, (&pb{}).u(1, 1).u(2, 8).u(4, 9))
		p.msg(pLocation, (&pb{}).u(1, 1).msg(4, (&pb{}).u(1, 1).u(2, 1)))
		s := sample([]uint64{1}, 1, 1, 1, 1).b
		for range 20_000_000 {
			p.msg(pSample, &pb{b: s})
		}
		gzfile("samples-20m", p.b, any)
		p = heapHeader("main.f", "f.go")
		p.msg(pFunction, (&pb{}).u(1, 1).u(2, 8).u(4, 9))
		p.msg(pLocation, (&pb{}).u(1, 1).msg(4, (&pb{}).u(1, 1).u(2, 1)))
		ids := make([]uint64, 60_000_000)
		for i := range ids {
			ids[i] = 1
		}
		p.msg(pSample, sample(ids, 1, 1, 1, 1))
		gzfile("one-sample-60m-locations", p.b, any)
		p = heapHeader("main.f", "f.go")
		p.msg(pFunction, (&pb{}).u(1, 1).u(2, 8).u(4, 9))
		loc := (&pb{}).u(1, 1)
		for range 5_000_000 {
			loc.msg(4, (&pb{}).u(1, 1).u(2, 1))
		}
		p.msg(pLocation, loc)
		p.msg(pSample, sample([]uint64{1}, 1, 1, 1, 1))
		lines := gzfile("location-5m-lines", p.b, any)
		for range 11_000_000 {
			loc.msg(4, (&pb{}).u(1, 1).u(2, 1))
		}
		p = heapHeader("main.f", "f.go")
		p.msg(pFunction, (&pb{}).u(1, 1).u(2, 8).u(4, 9))
		p.msg(pLocation, loc)
		p.msg(pSample, sample([]uint64{1}, 1, 1, 1, 1))
		gzfile("location-16m-lines", p.b, any)
		// Many profiles at once share the decoding cap.
		cases = append(cases, Case{Cat: "pprof", Name: "location-5m-lines-x6", Args: []string{"analyze", lines, lines, lines, lines, lines, lines},
			Want: any, Kind: analyzeKind, Input: 6 * int64(len(p.b)), Decompressed: 6 * int64(len(p.b))})
		p = heapHeader()
		p.msg(pSample, sample([]uint64{7, 1 << 62, math.MaxUint64}, 1, 1, 1, 1))
		p.msg(pLocation, (&pb{}).u(1, 9).msg(4, (&pb{}).u(1, 1<<40).u(2, 1)))
		p.msg(pFunction, (&pb{}).u(1, 1).u(2, 1<<40).u(4, math.MaxUint64))
		gzfile("dangling-ids", p.b, any)
		p = heapHeader()
		for i := range uint64(1000) {
			p.msg(pLocation, (&pb{}).u(1, 5).u(3, i))
			p.msg(pFunction, (&pb{}).u(1, 5).u(2, 1))
		}
		p.msg(pSample, sample([]uint64{5}, 1, 1, 1, 1))
		gzfile("duplicate-ids", p.b, any)
	}
	// Values: negative, overflowing, mismatched counts.
	{
		base := func() *pb {
			p := heapHeader("main.handler", "h.go", "net/http.(*conn).serve")
			p.msg(pFunction, (&pb{}).u(1, 1).u(2, 8).u(4, 9))
			p.msg(pFunction, (&pb{}).u(1, 2).u(2, 10).u(4, 9))
			p.msg(pLocation, (&pb{}).u(1, 1).msg(4, (&pb{}).u(1, 1).u(2, 1)))
			p.msg(pLocation, (&pb{}).u(1, 2).msg(4, (&pb{}).u(1, 2).u(2, 1)))
			return p
		}
		neg := uint64(1<<64 - 1) // -1 as a varint
		minI := uint64(1 << 63)
		maxI := uint64(math.MaxInt64)
		for name, vals := range map[string][][]uint64{
			"values-negative": {{neg, neg, neg, neg}},
			"values-minint":   {{minI, minI, minI, minI}},
			"values-overflow": {{maxI, maxI, maxI, maxI}, {maxI, maxI, maxI, maxI}, {1, 1, 1, 1}},
			"values-cancel":   {{maxI, maxI, maxI, maxI}, {minI, minI, minI, minI}, {5, 5, 5, 5 << 30}},
			"values-few":      {{1}},
			"values-many":     {{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		} {
			p := base()
			for _, v := range vals {
				p.msg(pSample, sample([]uint64{1, 2}, v...))
			}
			pp := file(name, p.b, any, "--fail-on-retained", "1B")
			cases = append(cases, Case{Cat: "pprof", Name: name + "-base", Args: []string{"analyze", pp, "--base", pp, "--fail-on-growth", "1B", "--requests", "3"},
				Want: any, Kind: analyzeKind, Input: int64(len(p.b))})
		}
		p := heapHeader()
		p.msg(pSampleType, (&pb{}).u(1, 1<<40).u(2, 1<<40))
		p.u(14, 1<<40) // default sample type: a string index out of range
		file("sample-type-dangling", p.b, any)
		p = &pb{}
		for range 100_000 {
			p.msg(pSampleType, (&pb{}).u(1, 0).u(2, 0))
		}
		p.bytes(pString, nil)
		file("sample-types-100k", p.b, any)
	}
	// Labels: a bomb, evil text, and evil function names in GitHub format.
	{
		evil := "main.\x1b[31mred\r\n::error::forged\u202eevil\xff"
		p := heapHeader(evil, "f.go", "request_id", "v")
		p.msg(pFunction, (&pb{}).u(1, 1).u(2, 8).u(3, 8).u(4, 9))
		p.msg(pLocation, (&pb{}).u(1, 1).msg(4, (&pb{}).u(1, 1).u(2, 1)))
		s := sample([]uint64{1}, 1, 1<<30, 1, 1<<30)
		s.msg(3, (&pb{}).u(1, 8).u(2, 8))
		s.msg(3, (&pb{}).u(1, 10).u(2, 8))
		s.msg(3, (&pb{}).u(1, 8).u(3, 5).u(4, 8))
		p.msg(pSample, s)
		for _, f := range []string{"text", "json", "github"} {
			file("evil-names-"+f, p.b, any, "--format", f, "--fail-on-retained", "1B", "--show-labels", "--full-stack")
		}
		g := &pb{}
		g.msg(pSampleType, (&pb{}).u(1, 1).u(2, 2))
		for _, s := range []string{"goroutine", "count", evil, "f.go", "request_id"} {
			g.bytes(pString, []byte(s))
		}
		g.msg(pFunction, (&pb{}).u(1, 1).u(2, 3).u(4, 4))
		g.msg(pLocation, (&pb{}).u(1, 1).msg(4, (&pb{}).u(1, 1).u(2, 1)))
		gs := sample([]uint64{1}, 3)
		gs.msg(3, (&pb{}).u(1, 5).u(2, 3))
		gs.msg(3, (&pb{}).u(1, 3).u(2, 3))
		g.msg(pSample, gs)
		for _, f := range []string{"text", "json", "github"} {
			file("evil-goroutines-"+f, g.b, any, "--format", f, "--fail-on-goroutines", "0", "--show-labels")
		}
		bomb := heapHeader()
		keys := 1_000_000
		for i := range keys {
			bomb.bytes(pString, []byte(fmt.Sprintf("k%d", i)))
		}
		s = sample(nil, 1, 1, 1, 1)
		for i := range keys {
			s.msg(3, (&pb{}).u(1, uint64(8+i)).u(2, uint64(8+(i+1)%keys)))
		}
		bomb.msg(pSample, s)
		gzfile("label-bomb-1m", bomb.b, any, "--show-labels")
		bomb = heapHeader("k", "v")
		l := (&pb{}).u(1, 8).u(2, 9).b
		for range 50_000 {
			s := sample(nil, 1, 1, 1, 1)
			for range 100 {
				s.msg(3, &pb{b: l})
			}
			bomb.msg(pSample, s)
		}
		gzfile("label-bomb-5m", bomb.b, any, "--show-labels")
	}
	// Unknown fields: deep groups, huge lengths.
	{
		var b []byte
		for range 1_000_000 {
			b = binary.AppendUvarint(b, 15<<3|3) // start group 15
		}
		file("groups-deep", b, any)
		file("length-huge", (&pb{}).tag(2, 2).b[:1:1], any)
		p := &pb{}
		p.tag(2, 2)
		p.b = binary.AppendUvarint(p.b, 1<<62)
		file("length-huge2", p.b, any)
		var nested []byte
		for range 100_000 {
			nested = (&pb{}).bytes(2, nested).b
		}
		file("nested-100k", nested, any)
	}
	// Legacy text formats.
	{
		var t bytes.Buffer
		t.WriteString("heap profile: 1: 2 [3: 4] @ heap/1048576\n")
		for i := range 5_000_000 {
			fmt.Fprintf(&t, "1: %d [1: 1] @ 0x%x\n", i, 0x401000+i)
		}
		gzfile("legacy-heap-5m", t.Bytes(), any)
		t.Reset()
		t.WriteString("heap profile: 9223372036854775807: 9223372036854775807 [9223372036854775807: 9223372036854775807] @ heap/1\n")
		t.WriteString("9223372036854775807: 9223372036854775807 [9223372036854775807: 9223372036854775807] @ 0x1\n")
		t.WriteString("-5: -5 [-5: -5] @ 0x2\n")
		t.WriteString("# 0x1\tmain.\x1b[31mred\r\n::error::forged+0x0\t/x.go:1\n")
		file("legacy-heap-extreme", t.Bytes(), any, "--format", "github", "--fail-on-retained", "1B")
		t.Reset()
		t.WriteString("goroutine profile: total 99999999999\n")
		for i := range 200_000 {
			fmt.Fprintf(&t, "%d @ 0x%x\n#\t0x%x\tmain.\x1b[2Jf%d+0x1\t/x.go:%d\n\n", i+1, 0x401000+i, 0x401000+i, i, i)
		}
		file("legacy-goroutine-200k", t.Bytes(), any)
		t.Reset()
		t.WriteString("--- contention:\ncycles/second=2000000000\n")
		for i := range 100_000 {
			fmt.Fprintf(&t, "%d %d @ 0x%x 0x%x\n", i, i, 0x401000+i, 0x402000+i)
		}
		file("legacy-contention", t.Bytes(), any)
		t.Reset()
		t.WriteString("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 1 [1: 1] @")
		for i := range 2_000_000 {
			fmt.Fprintf(&t, " 0x%x", 0x401000+i)
		}
		t.WriteString("\n")
		file("legacy-one-record-2m-addrs", t.Bytes(), any)
		t.Reset()
		for range 1_000_000 {
			t.WriteString("# comment line\n")
		}
		file("legacy-comments", t.Bytes(), any)
		t.Reset()
		t.WriteString("goroutine 1 [running]:\nmain.main()\n\t/x.go:1 +0x1\n")
		file("goroutine-debug2", t.Bytes(), any)
	}
	// holders given profiles: it names them profiles, at little cost.
	for _, name := range []string{"real-heap", "bomb-1g.gz", "label-bomb-1m.gz", "location-16m-lines.gz", "samples-20m.gz", "strings-5m.gz", "legacy-heap-5m.gz"} {
		p := filepath.Join(d, name)
		cases = append(cases, Case{Cat: "pprof", Name: "holders-" + name, Args: []string{"holders", p}, Kind: holdersKind, Input: size(p)})
	}
	// Devices and standard input.
	for _, dev := range []string{"/dev/zero", "/dev/urandom", "/dev/null"} {
		add("dev"+strings.ReplaceAll(dev, "/", "-"), any, 0, 0, dev)
		add("base-dev"+strings.ReplaceAll(dev, "/", "-"), any, 0, 0, realPath, "--base", dev)
		cases = append(cases, Case{Cat: "pprof", Name: "stdin" + strings.ReplaceAll(dev, "/", "-"), Args: []string{"analyze", "-"}, Stdin: dev,
			Want: any, Kind: analyzeKind, Decompressed: capBytes})
	}
	cases = append(cases, Case{Cat: "pprof", Name: "stdin-bomb", Args: []string{"analyze", "-"}, Stdin: bombPath, Want: any, Kind: analyzeKind, Decompressed: capBytes})
	// URLs.
	for _, u := range []string{"endless", "redirect", "evil", "bomb", "nothing", "heap/endless"} {
		cases = append(cases, Case{Cat: "pprof", Name: "url-" + strings.ReplaceAll(u, "/", "-"), Args: []string{"analyze", a.url + "/" + u},
			Want: any, Kind: analyzeKind, Decompressed: capBytes})
	}
	cases = append(cases, Case{Cat: "pprof", Name: "url-slow", Args: []string{"analyze", a.url + "/slow", "--http-timeout", "1s"},
		Want: any, Kind: analyzeKind, Decompressed: capBytes, Wait: 1})
	return cases, firstErr
}

// gzipZeros returns n zero bytes gzipped.
func gzipZeros(n int64) []byte {
	return compressedZeros(n, func(w io.Writer) io.WriteCloser {
		z, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
		return z
	})
}

// compressedZeros returns n zero bytes written through the compressor
// that wrap puts in front of a buffer.
func compressedZeros(n int64, wrap func(io.Writer) io.WriteCloser) []byte {
	var buf bytes.Buffer
	w := wrap(&buf)
	zero := make([]byte, 1<<20)
	for done := int64(0); done < n; done += int64(len(zero)) {
		w.Write(zero)
	}
	w.Close()
	return buf.Bytes()
}

func timeAfter() <-chan time.Time { return time.After(time.Second) }
