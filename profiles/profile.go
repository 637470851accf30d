package profiles

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/google/pprof/profile"
)

// Kind says what a profile measures.
type Kind string

// The kinds of profile analyze reads.
const (
	// Heap is a heap or allocs profile: its samples have inuse_space and
	// inuse_objects values.
	Heap Kind = "heap"
	// Goroutine is a goroutine profile: one count per distinct stack and
	// label set.
	Goroutine Kind = "goroutine"
	// GoroutineLeak is Go 1.27's goroutineleak profile: the goroutines a
	// leak-detecting collection proved blocked for ever (on channels or
	// locks nothing runnable can reach), one count per stack.
	GoroutineLeak Kind = "goroutineleak"
)

// Format says how a profile was encoded.
type Format string

// The encodings Parse reads.
const (
	Proto  Format = "proto"  // profile.proto, gzipped or not
	Legacy Format = "legacy" // the debug=1 text formats
)

// DefaultMaxBytes bounds the size of a profile, compressed or not, that
// Parse and a Loader accept: 256 MiB, far above real profiles (a heap
// profile of a large service is a few MiB).
const DefaultMaxBytes = 256 << 20

// MaxMaxBytes is the largest size limit a Loader takes: 2 GiB - 1, what
// one slice can hold on 32-bit platforms.
const MaxMaxBytes = 1<<31 - 1

// Profile is one parsed profile and where it came from.
type Profile struct {
	// Source is the file name or URL as the user gave it.
	Source string
	Kind   Kind
	Format Format
	// Prof is the parsed profile. Legacy text profiles have been given
	// function names from their "#" comment lines, and goroutine labels from
	// their "# labels:" lines, where they have them.
	Prof *profile.Profile
}

// Error is a failure to read or understand one profile. Its message starts
// with the file name or URL.
type Error struct {
	Source string
	Err    error
}

func (e *Error) Error() string { return e.Source + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

func sourceErrorf(source, format string, args ...any) error {
	return &Error{Source: source, Err: fmt.Errorf(format, args...)}
}

// Parse reads one heap or goroutine profile from data, which is a gzipped
// or plain profile.proto or a legacy text profile. source names the data in
// errors. Parse never panics; data larger than DefaultMaxBytes, once
// decompressed, is refused.
func Parse(source string, data []byte) (*Profile, error) {
	return parse(source, data, DefaultMaxBytes, nil, nil)
}

// parse is Parse with a size limit, a progress callback for the
// decompression and, when decoded is not nil, the memory that decoding
// the profiles parsed before took, which it adds this profile's to.
func parse(source string, data []byte, maxBytes int64, progress func(phase string, done, total int64), decoded *atomic.Int64) (p *Profile, err error) {
	if len(data) == 0 {
		return nil, sourceErrorf(source, "empty file, not a profile")
	}
	raw := data
	var stream *costStream
	if isGzip(data) {
		raw, stream, err = gunzip(source, data, maxBytes, progress)
		if err != nil {
			return nil, err
		}
		if len(raw) == 0 {
			return nil, sourceErrorf(source, "empty profile: the gzip stream holds no data")
		}
	}
	if err := sniff(source, raw); err != nil {
		return nil, err
	}
	var earlier int64
	if decoded != nil {
		earlier = decoded.Load()
	}
	cost, err := checkDecodeCost(raw, int64(len(data)), maxBytes, earlier, stream)
	if err != nil {
		return nil, &Error{Source: source, Err: err}
	}
	if decoded != nil {
		decoded.Add(cost)
	}
	if progress != nil {
		progress("parse", 0, -1)
	}
	prof, format, err := parseProfile(raw)
	if err != nil {
		return nil, sourceErrorf(source, "%v", err)
	}
	p = &Profile{Source: source, Format: format, Prof: prof}
	if format == Legacy {
		symbolizeLegacy(prof, raw)
	}
	if p.Kind, err = kindOf(prof); err != nil {
		return nil, sourceErrorf(source, "%v", err)
	}
	if len(prof.Sample) == 0 {
		return nil, sourceErrorf(source, "empty %s profile: it has no samples", p.Kind)
	}
	if err := checkValues(p); err != nil {
		return nil, sourceErrorf(source, "%v", err)
	}
	escapeText(prof)
	return p, nil
}

// parseProfile parses uncompressed profile bytes, proto first, then the
// legacy text formats, with google/pprof's parsers. A panic in a parser
// becomes an error.
func parseProfile(raw []byte) (p *profile.Profile, format Format, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("malformed profile (the parser failed: %v)", r)
		}
	}()
	p, err = profile.ParseUncompressed(raw)
	if err == nil {
		if err := p.CheckValid(); err != nil {
			return nil, "", fmt.Errorf("malformed profile: %v", err)
		}
		return p, Proto, nil
	}
	protoErr := err
	if looksLikeText(raw) {
		p, err = profile.ParseData(raw)
		if err == nil {
			return p, Legacy, nil
		}
		if strings.Contains(err.Error(), "unrecognized profile format") {
			return nil, "", errors.New("not a pprof profile: unrecognized text format")
		}
		return nil, "", fmt.Errorf("malformed legacy text profile: %v", strings.TrimPrefix(err.Error(), "parsing profile: "))
	}
	return nil, "", fmt.Errorf("not a pprof profile: neither gzip, profile.proto nor text (the proto decoder says: %v)", protoErr)
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// gunzip decompresses data, refusing more than maxBytes of output. The
// size in the gzip trailer is only a capacity hint, and only when it is
// plausible.
func gunzip(source string, data []byte, maxBytes int64, progress func(phase string, done, total int64)) ([]byte, *costStream, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, sourceErrorf(source, "corrupt gzip header: %v", err)
	}
	hint := int64(0)
	if len(data) >= 18 {
		isize := int64(binary.LittleEndian.Uint32(data[len(data)-4:]))
		// Deflate expands at most about 1032 times; ISIZE is the size mod
		// 2^32, so it is a hint, never trusted.
		if isize <= maxBytes && isize <= int64(len(data))*1032 {
			hint = isize
		}
	}
	r, err := peekHead(source, zr, true)
	if err != nil {
		return nil, nil, err
	}
	if progress != nil {
		r = &countingReader{r: r, phase: "decompress", total: hint, progress: progress}
	}
	// The cost of decoding is worked out on the other core as the data
	// comes (checkDecodeCost).
	s := startCostStream(satMul(maxBytes, DecodeFactor))
	raw, err := readLimited(r, "decompressed data", maxBytes, min(hint, untrustedHint), s)
	var re *readError
	switch {
	case errors.As(err, &re) && errors.Is(err, io.ErrUnexpectedEOF):
		return nil, nil, sourceErrorf(source, "truncated gzip data: the stream stops at byte %d, before its end (file cut short?)", len(data))
	case errors.As(err, &re):
		return nil, nil, sourceErrorf(source, "corrupt gzip data: %v", re.err)
	case err != nil:
		return nil, nil, &Error{Source: source, Err: err}
	}
	return raw, s, nil
}

// sniff recognises common non-profiles so the error says what they are.
func sniff(source string, raw []byte) error {
	head := raw
	if len(head) > 512 {
		head = head[:512]
	}
	if err := checkHead(source, head, false); err != nil {
		return err
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n\ufeff")
	lower := strings.ToLower(string(trimmed))
	switch {
	case strings.HasPrefix(lower, "<!doctype html"), strings.HasPrefix(lower, "<html"),
		strings.HasPrefix(lower, "<head"), strings.HasPrefix(lower, "<body"),
		strings.HasPrefix(lower, "<pre"), strings.HasPrefix(lower, "<a href"):
		return sourceErrorf(source, "an HTML page, not a profile (a /debug/pprof/ index or an error page?)")
	case strings.HasPrefix(lower, "goroutine ") && len(lower) > 10 && lower[10] >= '0' && lower[10] <= '9':
		return sourceErrorf(source, "a goroutine dump (debug=2), not a profile: save /debug/pprof/goroutine without debug=2")
	case len(bytes.TrimSpace(raw)) == 0:
		return sourceErrorf(source, "empty profile: no data")
	}
	return nil
}

// looksLikeText reports whether raw starts like the legacy text formats
// (printable ASCII), so a binary that is not a profile gets the proto
// decoder's error rather than the text parsers'.
func looksLikeText(raw []byte) bool {
	n := min(len(raw), 256)
	for _, c := range raw[:n] {
		if c != '\n' && c != '\r' && c != '\t' && (c < 0x20 || c > 0x7e) {
			return false
		}
	}
	return n > 0
}

// kindOf tells a heap profile from a goroutine profile by sample types.
func kindOf(p *profile.Profile) (Kind, error) {
	if inuseIndices(p) != [2]int{-1, -1} {
		return Heap, nil
	}
	if len(p.SampleType) == 1 && p.SampleType[0].Type == "goroutine" {
		return Goroutine, nil
	}
	if len(p.SampleType) == 1 && p.SampleType[0].Type == "goroutineleak" {
		return GoroutineLeak, nil
	}
	types := make([]string, len(p.SampleType))
	for i, st := range p.SampleType {
		types[i] = st.Type + "/" + st.Unit
	}
	what := "profile"
	if p.PeriodType != nil && p.PeriodType.Type != "" {
		what = p.PeriodType.Type + " profile"
	}
	return "", fmt.Errorf("a %s (sample types %s), not a heap, goroutine or goroutineleak profile",
		what, strings.Join(types, ", "))
}

// inuseIndices returns the indices of the in-use bytes and objects of a
// heap profile, or -1s. A legacy text heap profile whose header shows no
// allocations beyond those in use has only "space" and "objects".
func inuseIndices(p *profile.Profile) [2]int {
	space, objects := sampleIndex(p, "inuse_space"), sampleIndex(p, "inuse_objects")
	if space >= 0 && objects >= 0 {
		return [2]int{space, objects}
	}
	if p.PeriodType != nil && p.PeriodType.Type == "space" && len(p.SampleType) == 2 {
		space, objects = sampleIndex(p, "space"), sampleIndex(p, "objects")
		if space >= 0 && objects >= 0 {
			return [2]int{space, objects}
		}
	}
	return [2]int{-1, -1}
}

// sampleIndex returns the index of the sample type named typ, or -1.
func sampleIndex(p *profile.Profile, typ string) int {
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i
		}
	}
	return -1
}

// countingReader reports progress while reading.
type countingReader struct {
	r        io.Reader
	phase    string
	done     int64
	total    int64
	progress func(phase string, done, total int64)
	lastMiB  int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.done += int64(n)
	if mib := c.done >> 20; mib != c.lastMiB {
		c.lastMiB = mib
		c.progress(c.phase, c.done, c.total)
	}
	return n, err
}
