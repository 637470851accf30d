package profiles_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/profiles"
)

// allocated returns the bytes allocated while fn runs: an upper bound of
// what fn held at its peak.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// writeGzip writes a gzip file of head followed by n MiB of rec repeated,
// and returns its name. The MiB is compressed once and its gzip member
// repeated: a gzip reader reads concatenated members as one stream.
func writeGzip(t *testing.T, head, rec []byte, n int) string {
	t.Helper()
	member := func(data []byte) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		zw.Write(data)
		zw.Close()
		return b.Bytes()
	}
	file := member(head)
	mib := member(bytes.Repeat(rec, (1<<20)/len(rec)))
	for range n {
		file = append(file, mib...)
	}
	name := filepath.Join(t.TempDir(), "hostile.gz")
	if err := os.WriteFile(name, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// loadLimit loads name and checks it is refused by the given cap.
func loadLimit(t *testing.T, l *profiles.Loader, name string, limit profiles.Limit) *profiles.LimitError {
	t.Helper()
	_, err := l.Load(context.Background(), name)
	var le *profiles.LimitError
	if !errors.As(err, &le) || le.Limit != limit {
		t.Fatalf("Load(%s) = %v, want a %s limit error", name, err, limit)
	}
	if !strings.HasPrefix(err.Error(), name+": ") {
		t.Errorf("error does not start with the source: %v", err)
	}
	return le
}

// emptySamples returns an uncompressed heap profile with n samples of no
// values and no stack: two bytes each, about 150 once decoded.
func emptySamples(t *testing.T) (head, rec []byte) {
	var buf bytes.Buffer
	if err := newHeapBuilder().heap(1, 100, mallocgc, upload).p.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), []byte{0x12, 0x00}
}

func TestHostileManySamples(t *testing.T) {
	head, rec := emptySamples(t)
	const mib = 2 // 1M samples, about 150 MiB decoded
	name := writeGzip(t, head, rec, mib)
	l := &profiles.Loader{MaxBytes: 4 << 20}
	var le *profiles.LimitError
	got := allocated(func() { le = loadLimit(t, l, name, profiles.LimitDecoded) })
	if le.Size <= le.Max || le.Max != profiles.DecodeFactor*l.MaxBytes {
		t.Errorf("estimate %d for %d MiB of samples, limit %d", le.Size, mib, le.Max)
	}
	if limit := uint64(2*(mib<<20+len(head))) + 1<<20; got > limit {
		t.Errorf("refusing %d MiB allocated %d KiB, over %d", mib, got>>10, limit>>10)
	}
	t.Logf("%v; %d MiB allocated", le, got>>20)
}

// Empty samples decode to 88 times their size: 6 MiB of them, under the
// default limits' absolute cap (4 × 256 MiB), is refused by the cap that
// follows the profile's size, half of MaxBytes plus DecodePerByte × its
// size, before anything is decoded.
func TestHostileDecodeRelative(t *testing.T) {
	head, rec := emptySamples(t)
	const mib = 6
	name := writeGzip(t, head, rec, mib)
	l := new(profiles.Loader)
	var le *profiles.LimitError
	got := allocated(func() { le = loadLimit(t, l, name, profiles.LimitDecoded) })
	size := int64(mib<<20 + len(head))
	if le.Input < mib<<20 || le.Input > size || le.Max != profiles.DefaultMaxBytes/2+profiles.DecodePerByte*le.Input || le.Size <= le.Max {
		t.Errorf("%+v: want the cap of a %d-byte profile", le, size)
	}
	if le.Max >= profiles.DecodeFactor*profiles.DefaultMaxBytes || !strings.Contains(le.Error(), "32 × its 6.0 MiB") {
		t.Errorf("error %q", le)
	}
	if limit := uint64(3 * size); got > limit {
		t.Errorf("refusing %d MiB allocated %d KiB, over %d", mib, got>>10, limit>>10)
	}
}

// The profiles one Loader reads share the decoding cap: a profile that
// fits alone is refused after another that took most of it, so that many
// profiles given at once cannot take many times the memory of one.
func TestHostileSharedDecodeCap(t *testing.T) {
	head, _ := emptySamples(t)
	// A sample of 20 locations and 4 values: 30 bytes, decoded 880.
	inner := append([]byte{0x0a, 20}, bytes.Repeat([]byte{1}, 20)...)
	inner = append(inner, 0x12, 4, 1, 1, 1, 1)
	rec := append([]byte{0x12, byte(len(inner))}, inner...)
	name := writeGzip(t, head, rec, 1)
	l := &profiles.Loader{MaxBytes: 8 << 20}
	if _, err := l.Load(context.Background(), name); err != nil {
		t.Fatalf("first load: %v", err)
	}
	le := loadLimit(t, l, name, profiles.LimitDecoded)
	if le.Earlier < 16<<20 || le.Max != profiles.DecodeFactor*l.MaxBytes-le.Earlier || !strings.Contains(le.Error(), "that the profiles read before it take") {
		t.Errorf("second load: %+v, %q", le, le)
	}
	// A Loader of its own reads it.
	if _, err := (&profiles.Loader{MaxBytes: 8 << 20}).Load(context.Background(), name); err != nil {
		t.Errorf("a new Loader: %v", err)
	}
}

// TestHostileManySamplesFull is the case of issue 10: 50M samples in a
// small gzip file, at the default limits.
func TestHostileManySamplesFull(t *testing.T) {
	if os.Getenv("CTXLEAK_LONG") == "" {
		t.Skip("set CTXLEAK_LONG=1 to decompress 100 MB")
	}
	head, rec := emptySamples(t)
	const n = 50_000_000
	name := writeGzip(t, head, rec, 2*n>>20)
	st, _ := os.Stat(name)
	var le *profiles.LimitError
	got := allocated(func() { le = loadLimit(t, new(profiles.Loader), name, profiles.LimitDecoded) })
	// The pieces read, their join, and the unfilled end of the last piece.
	if limit := uint64(2*(2*n+len(head))) + 17<<20; got > limit {
		t.Errorf("allocated %d MiB, over %d", got>>20, limit>>20)
	}
	t.Logf("%d KB gzip: %v; %d MiB allocated", st.Size()>>10, le, got>>20)
}

func TestHostileGzipOfZeros(t *testing.T) {
	name := writeGzip(t, nil, make([]byte, 1<<10), 8) // 8 MiB of zeros
	l := &profiles.Loader{MaxBytes: 2 << 20}
	var le *profiles.LimitError
	got := allocated(func() { le = loadLimit(t, l, name, profiles.LimitSize) })
	if le.What != "decompressed data" || !strings.Contains(le.Error(), "the decompressed data is over the profile size limit of 2.0 MiB") {
		t.Errorf("error %q", le)
	}
	if limit := uint64(l.MaxBytes) + 1<<20; got > limit {
		t.Errorf("allocated %d KiB, over %d KiB", got>>10, limit>>10)
	}
}

func TestHostileNotRegular(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := new(profiles.Loader).Load(context.Background(), "/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero: is a character device, not a regular file") {
		t.Errorf("Load(/dev/zero) = %v", err)
	}
}

// legacyRecords returns a legacy text heap profile of n records.
func legacyRecords(n int) []byte {
	var b bytes.Buffer
	b.WriteString("heap profile: 1: 1 [1: 1] @ heap/1048576\n")
	for i := range n {
		fmt.Fprintf(&b, "1: 1 [1: 1] @ 0x%x\n", i+1)
	}
	return b.Bytes()
}

func TestHostileLegacyRecords(t *testing.T) {
	data := legacyRecords(4_000) // 70 KB, 5 MB decoded
	name := filepath.Join(t.TempDir(), "heap.txt")
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	l := &profiles.Loader{MaxBytes: 512 << 10}
	var le *profiles.LimitError
	got := allocated(func() { le = loadLimit(t, l, name, profiles.LimitDecoded) })
	if le.Max != profiles.LegacyDecodeFactor*l.MaxBytes {
		t.Errorf("limit %d", le.Max)
	}
	if limit := uint64(len(data)) + 256<<10; got > limit {
		t.Errorf("allocated %d KiB for %d KiB of text, over %d KiB", got>>10, len(data)>>10, limit>>10)
	}
	// Under the limits, the same records are read.
	l.MaxBytes = 4 << 20
	p, err := l.Load(context.Background(), name)
	if err != nil || len(p.Prof.Sample) != 4_000 {
		t.Fatalf("Load with a higher limit: %v", err)
	}
}

func TestHostileLegacyRecordsFull(t *testing.T) {
	if os.Getenv("CTXLEAK_LONG") == "" {
		t.Skip("set CTXLEAK_LONG=1 to write 5M legacy records")
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(legacyRecords(5_000_000))
	zw.Close()
	name := filepath.Join(t.TempDir(), "heap.txt.gz")
	if err := os.WriteFile(name, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var le *profiles.LimitError
	got := allocated(func() { le = loadLimit(t, new(profiles.Loader), name, profiles.LimitDecoded) })
	if got > 3*profiles.DefaultMaxBytes {
		t.Errorf("allocated %d MiB", got>>20)
	}
	t.Logf("%d KB gzip: %v; %d MiB allocated", buf.Len()>>10, le, got>>20)
}

// The legacy text parser takes about 200 ns a byte of sample lines, so
// they are capped by the input's size: 250,000 one-address records (4.7 MB,
// 320 MB decoded, under the memory cap) are refused before parsing, plain
// or gzipped, having allocated little more than the file; comment lines,
// which parse fast, do not count.
func TestHostileLegacyLines(t *testing.T) {
	data := legacyRecords(250_000)
	name := filepath.Join(t.TempDir(), "heap.txt")
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var le *profiles.LimitError
	got := allocated(func() { le = loadLimit(t, new(profiles.Loader), name, profiles.LimitLegacyLines) })
	if limit := uint64(len(data)) + 1<<20; got > limit {
		t.Errorf("allocated %d KiB for %d KiB of text, over %d KiB", got>>10, len(data)>>10, limit>>10)
	}
	if want := int64(2<<20) + int64(len(data))/32; le.Max != want || le.Size <= le.Max || !strings.Contains(le.Error(), "debug=0") {
		t.Errorf("limit %d (want %d), lines %d: %v", le.Max, want, le.Size, le)
	}

	// Gzipped, the input is smaller and so is the cap.
	rec := []byte("1: 1 [1: 1] @ 0x1234\n")
	zname := writeGzip(t, []byte("heap profile: 1: 1 [1: 1] @ heap/1048576\n"), rec, 5)
	le = loadLimit(t, new(profiles.Loader), zname, profiles.LimitLegacyLines)
	if st, err := os.Stat(zname); err != nil || le.Max != int64(2<<20)+st.Size()/32 {
		t.Errorf("gzip: limit %d: %v", le.Max, err)
	}

	// Comment lines do not count: 6 MB of them, with 2,000 records.
	var b bytes.Buffer
	b.WriteString("heap profile: 1: 1 [1: 1] @ heap/1048576\n")
	for i := range 2_000 {
		fmt.Fprintf(&b, "1: 1 [1: 1] @ 0x%x\n", i+1)
		for range 100 {
			fmt.Fprintf(&b, "#\t0x%x\tmain.f+0x1\t/src/main.go:%d\n", i+1, i)
		}
	}
	if b.Len() < 5<<20 {
		t.Fatalf("%d bytes of comments, want over 5 MiB", b.Len())
	}
	cname := filepath.Join(t.TempDir(), "comments.txt")
	if err := os.WriteFile(cname, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := new(profiles.Loader).Load(context.Background(), cname)
	if err != nil || len(p.Prof.Sample) != 2_000 {
		t.Fatalf("Load of 2,000 records with 6 MB of comments: %v", err)
	}
}

func TestHostileEndlessDownload(t *testing.T) {
	chunk := bytes.Repeat([]byte{0x1f, 0x8b, 0, 0}, 16<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	l := &profiles.Loader{MaxBytes: 8 << 20}
	var le *profiles.LimitError
	got := allocated(func() { le = loadLimit(t, l, srv.URL+"/debug/pprof/heap", profiles.LimitSize) })
	if le.What != "download" {
		t.Errorf("error %q", le)
	}
	if limit := uint64(l.MaxBytes) + 4<<20; got > limit {
		t.Errorf("allocated %d KiB, over %d KiB", got>>10, limit>>10)
	}
}

func TestHostileValues(t *testing.T) {
	for _, tt := range []struct {
		name string
		b    *builder
		want string
	}{
		{"negative bytes", newHeapBuilder().heap(1, 100, mallocgc, upload).heap(1, -2, mallocgc, upload),
			"sample 1 has a negative inuse_space value (-2)"},
		{"negative objects", newHeapBuilder().heap(-1, 100, mallocgc, upload), "negative inuse_objects value (-1)"},
		{"overflow", newHeapBuilder().heap(1, math.MaxInt64/2+1, mallocgc, upload).heap(1, math.MaxInt64/2+1, mallocgc, upload),
			"the inuse_space values add up to more than 32.0 PiB at sample 0"},
		{"negative goroutines", newGoroutineBuilder().goroutines(-3, "main.f main.go:1"), "negative goroutine value (-3)"},
		{"goroutine overflow", newGoroutineBuilder().goroutines(math.MaxInt64, "main.f main.go:1").goroutines(2, "main.g main.go:1"),
			"the goroutine values add up to more than"},
	} {
		_, err := profiles.Parse("p.pb.gz", tt.b.encode(t))
		if err == nil || !strings.HasPrefix(err.Error(), "p.pb.gz: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestHostileText checks that control characters in names and labels
// reach no output: not the text report, not GitHub's workflow commands.
func TestHostileText(t *testing.T) {
	evil := "main.evil\x1b[2J\r\n::error::forged\u202e"
	heap := newHeapBuilder().heap(1, 10<<20, mallocgc, evil+" main.go:7", "net/http.HandlerFunc.ServeHTTP server.go:2").profile(t, "heap.pb.gz")
	g := newGoroutineBuilder().goroutines(3, "request_id=r\n::error::v", "k\x1b]0;x\a=v", evil+" main.go:9").profile(t, "g.pb.gz")
	rep := &profiles.Report{Title: "t", GateSetting: func(profiles.GateResult) string { return "--gate" }}
	var err error
	if rep.Heap, err = profiles.AnalyzeHeap([]*profiles.Profile{heap}, nil, profiles.Options{LabelValues: true}); err != nil {
		t.Fatal(err)
	}
	if rep.Goroutines, err = profiles.AnalyzeGoroutines([]*profiles.Profile{g}, profiles.Options{LabelValues: true, RequestLabels: []string{"k\\x1b]0;x\\a"}}); err != nil {
		t.Fatal(err)
	}
	if rep.Gates, err = (profiles.Gates{Retained: ptr(int64(1)), Goroutines: ptr(int64(0))}).Check(rep.Heap, rep.Goroutines); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, write := range []func(io.Writer) error{
		func(w io.Writer) error { return rep.WriteText(w, false) },
		func(w io.Writer) error { return rep.WriteGitHub(w, "") },
		rep.WriteMarkdown, rep.WriteJSON,
	} {
		if err := write(&out); err != nil {
			t.Fatal(err)
		}
	}
	s := out.String()
	if strings.ContainsAny(s, "\x1b\r\a\u202e") {
		t.Errorf("a control character reached the output:\n%q", s)
	}
	if !strings.Contains(s, `main.evil\x1b[2J\r\n::error::forged\u202e`) {
		t.Errorf("the escaped name is missing:\n%s", s)
	}
	for line := range strings.Lines(s) {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "::") && !strings.HasPrefix(l, "::error title=") &&
			!strings.HasPrefix(l, "::error file=/src/main.go,") {
			t.Errorf("a line forges a workflow command: %q", line)
		}
	}
}

func ptr[T any](v T) *T { return &v }
