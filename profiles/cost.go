package profiles

import (
	"bytes"
	"fmt"

	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// Decoding turns every sample, location, function and string into
// structs, slices and maps that take far more memory than their encoding:
// an empty sample is 2 bytes of proto and about 150 bytes decoded. The
// costs below are what google/pprof's decoder and the analysis allocated
// per element, rounded up; decodeCost adds them up from a scan that
// allocates nothing, so a profile too large to decode is refused before it
// is decoded.
const (
	costSample   = 176 // Sample struct, its pointer, slice growth, analysis
	costID       = 32  // one location ID: locationIDX, Location and growth
	costValue    = 16  // one value and slice growth
	costLabel    = 512 // a label: labelX, its map entry, the key's slice, and the escaping's copy (550 B allocated, 1M labels measured)
	costLocation = 224 // Location struct, pointer, ID map, analysis
	costLine     = 192 // one Line of a location: the decoded message and the Line (204 B allocated, 1M lines measured)
	// costLongLine is a Line past the first longLines of one location:
	// pprof's decoder grew one slice of Lines for them, whose copies and
	// write barriers took about three times the time and memory of lines
	// spread over locations (5M lines: 1.84 s and 748 MB in one location,
	// 0.66 s and 206 MB over 1,000). Real locations have a line per
	// inlined call.
	costLongLine = 3 * costLine
	longLines    = 1024
	costFunction = 192 // Function struct, pointer, ID map, analysis
	costMapping  = 256
	costString   = 48 // string header, slice growth, plus its bytes
	costOther    = 64 // any other field

	// Legacy text: every record line is a sample, every address a location
	// with a name from its comment line.
	costLegacyRecord  = 1024
	costLegacyAddress = 256
	costLegacyComment = 256
)

// DecodeFactor is how much memory decoding a profile.proto may take for
// every byte of the size limit: a profile whose decoded form would take
// more than DecodeFactor times the Loader's MaxBytes is refused (a
// *LimitError of LimitDecoded) before it is decoded. Real profiles decode
// to about 10 times their size: at the default limits, those up to about
// 100 MiB decoded are read (real ones are a few MiB), and the largest
// accepted takes a few seconds to decode.
const DecodeFactor = 4

// DecodePerByte bounds decoding by the profile's own size as well: a
// profile.proto may take at most half of the Loader's MaxBytes plus
// DecodePerByte times its decompressed size (and never more than
// DecodeFactor × MaxBytes). By the estimate, real profiles decode to 10
// (goroutine) to 20 (heap) times their size; a crafted one of empty
// samples, 2 bytes each, to 88 times. So memory stays within a bounded
// multiple of the input, and a small profile of tiny records cannot take
// a gigabyte and seconds to decode.
const DecodePerByte = 32

// LegacyDecodeFactor is DecodeFactor for the legacy text formats, whose
// parser takes about 4µs per record: at the default size limit it lets
// about 500,000 records through, a few seconds of parsing.
const LegacyDecodeFactor = 2

// The legacy text parser (github.com/google/pprof's) takes about 200 ns
// per byte of sample lines on an idle machine (4 µs for a one-address
// record, more with more addresses; comment lines cost next to nothing):
// 50 times the 10 ns per byte that reading any input in linear time
// allows. So the sample lines of a legacy text profile are capped by the
// size of the input as given (the file, the download, compressed or not):
// 1/legacyLinesPerLimit of the Loader's MaxBytes (2 MiB at the default,
// half a second of parsing) plus 1/legacyLinesPerInput of the input's
// size (6 ns per input byte). A smaller MaxBytes does not lower the first
// part below legacyLinesMin.
const (
	legacyLinesPerLimit       = 128
	legacyLinesPerInput       = 32
	legacyLinesMin      int64 = DefaultMaxBytes / legacyLinesPerLimit
)

// legacyLinesLimit is the cap on the bytes of sample lines of a legacy
// text profile read from input bytes with the given MaxBytes.
func legacyLinesLimit(input, maxBytes int64) int64 {
	return max(legacyLinesMin, maxBytes/legacyLinesPerLimit) + input/legacyLinesPerInput
}

// legacyLines returns the bytes of the sample lines of raw (the lines that
// do not start with '#'), counting no further than past limit.
func legacyLines(raw []byte, limit int64) int64 {
	var n int64
	for len(raw) > 0 && n <= limit {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i+1], raw[i+1:]
		} else {
			raw = nil
		}
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] != '#' {
			n += int64(len(line))
		}
	}
	return n
}

// Limit names one of the caps on reading a profile.
type Limit string

// The caps on reading a profile.
const (
	// LimitSize caps a profile's bytes: the file, the download, the
	// standard input, the gzip data decompressed (Loader.MaxBytes).
	LimitSize Limit = "size"
	// LimitDecoded caps the memory that decoding a profile takes
	// (DecodeFactor × Loader.MaxBytes, LegacyDecodeFactor × for text).
	LimitDecoded Limit = "decoded"
	// LimitLegacyLines caps the sample lines of a legacy text profile,
	// which its parser reads slowly (legacyLinesLimit: a fraction of
	// Loader.MaxBytes plus a fraction of the input's size).
	LimitLegacyLines Limit = "legacy lines"
)

// LimitError is a profile refused by a cap: Loader.MaxBytes, or the
// memory its decoding would take. Raising Loader.MaxBytes raises both.
type LimitError struct {
	Limit Limit
	// What says which bytes went over: "file", "download", "input",
	// "decompressed data" or "decoded profile".
	What string
	// Size is the size when it was known before reading (a file's, a
	// Content-Length), 0 when reading stopped at the cap, or the memory
	// estimated for decoding the part of the profile scanned before the
	// estimate went over the cap.
	Size int64
	// Max is the cap.
	Max int64
	// Factor is Max / MaxBytes for LimitDecoded, 1 for LimitSize, 0 for
	// LimitLegacyLines.
	Factor int64
	// Input is, for a LimitDecoded error whose cap came from the profile's
	// size (MaxBytes/2 + DecodePerByte × Input, under Factor × MaxBytes),
	// that size: the profile's decompressed bytes. It is 0 otherwise.
	Input int64
	// Earlier is, for LimitDecoded, the memory taken by the profiles the
	// same Loader read before this one: they share the cap.
	Earlier int64
	// MaxBytes is the Loader's MaxBytes, the setting that raises the cap.
	MaxBytes int64
}

func (e *LimitError) Error() string {
	if e.Limit == LimitLegacyLines {
		return fmt.Sprintf("this legacy text profile has more than %s of sample lines, which its parser reads too slowly: the limit is %s (1/%d of the profile size limit of %s, at least %s, and 1/%d of the input's size); write the profile as profile.proto (debug=0)",
			bytesize.Format(e.Max), bytesize.Format(e.Max), legacyLinesPerLimit, bytesize.Format(e.MaxBytes), bytesize.Format(legacyLinesMin), legacyLinesPerInput)
	}
	if e.Limit == LimitDecoded && e.Input > 0 {
		return fmt.Sprintf("decoding this profile would take more than %s of memory (%d × its %s, plus half the profile size limit of %s): it is made of records far smaller than a real profile's",
			bytesize.Format(e.Max), DecodePerByte, bytesize.Format(e.Input), bytesize.Format(e.MaxBytes))
	}
	if e.Limit == LimitDecoded && e.Earlier > 0 {
		return fmt.Sprintf("decoding this profile would take more than %s of memory (%d × the profile size limit of %s, less the %s that the profiles read before it take)",
			bytesize.Format(e.Max), e.Factor, bytesize.Format(e.MaxBytes), bytesize.Format(e.Earlier))
	}
	if e.Limit == LimitDecoded {
		return fmt.Sprintf("decoding this profile would take more than %s of memory (%d × the profile size limit of %s)",
			bytesize.Format(e.Max), e.Factor, bytesize.Format(e.MaxBytes))
	}
	if e.Size <= e.Max {
		return fmt.Sprintf("the %s is over the profile size limit of %s", e.What, bytesize.Format(e.Max))
	}
	return fmt.Sprintf("the %s is %s, over the profile size limit of %s", e.What, bytesize.Format(e.Size), bytesize.Format(e.Max))
}

// checkDecodeCost refuses raw when decoding it would take more than
// DecodeFactor × maxBytes of memory (LegacyDecodeFactor for text), less
// earlier (what the profiles read before it by the same Loader take), or,
// for profile.proto, more than maxBytes/2 + DecodePerByte × its size, or
// when it is legacy text with more sample lines than legacyLinesLimit
// allows for input bytes (raw's size before decompression). It returns the
// memory decoding will take. stream, if not nil, walked raw as it was
// decompressed: its result is taken when it walked it all within the
// limit, and raw is walked again otherwise.
func checkDecodeCost(raw []byte, input, maxBytes, earlier int64, stream *costStream) (int64, error) {
	factor := int64(DecodeFactor)
	limit := max(satMul(maxBytes, factor)-earlier, 0)
	var relative int64 // the decompressed size, when it sets the limit
	if r := maxBytes/2 + satMul(int64(len(raw)), DecodePerByte); r < limit {
		limit, relative = r, int64(len(raw))
	}
	var cost int64
	var ok bool
	if c, whole := stream.result(); whole && c <= limit {
		cost, ok = c, true
	} else {
		cost, ok = protoCost(raw, limit)
	}
	if ok && cost > limit {
		return 0, &LimitError{Limit: LimitDecoded, What: "decoded profile", Size: cost, Max: limit, Factor: factor, MaxBytes: maxBytes, Input: relative, Earlier: earlier}
	}
	if ok {
		return cost, nil
	}
	limit = legacyLinesLimit(input, maxBytes)
	if n := legacyLines(raw, limit); n > limit {
		return 0, &LimitError{Limit: LimitLegacyLines, What: "sample lines", Size: n, Max: limit, MaxBytes: maxBytes}
	}
	factor = LegacyDecodeFactor
	limit = max(satMul(maxBytes, factor)-earlier, 0)
	if cost = legacyCost(raw, limit); cost > limit {
		return 0, &LimitError{Limit: LimitDecoded, What: "decoded profile", Size: cost, Max: limit, Factor: factor, MaxBytes: maxBytes, Earlier: earlier}
	}
	return cost, nil
}

func satMul(a, b int64) int64 {
	if a > 0 && b > 0 && a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}

// protoCost estimates the memory of decoding raw as a profile.proto
// message, stopping once the estimate is over limit. It reports false when raw is not well-formed protobuf
// at the top level (then it is no proto profile, and the text parsers get
// it).
func protoCost(raw []byte, limit int64) (int64, bool) {
	var cost int64
	for len(raw) > 0 && cost <= limit {
		f, ok := nextField(&raw)
		if !ok {
			return cost, false
		}
		c, ok := fieldCost(f)
		cost += c
		if !ok {
			return cost, false
		}
	}
	return cost, true
}

// fieldCost estimates the memory of decoding f, a field of a profile.proto
// message's top level. It reports false when
// f's body is not well-formed protobuf where it must be.
func fieldCost(f field) (int64, bool) {
	cost := int64(costOther)
	if f.num == 13 && f.wire == wireVarint { // a comment, not packed
		cost += costValue
	}
	if f.wire != 2 {
		return cost, true
	}
	switch f.num {
	case 2: // sample
		c, ok := sampleCost(f.body)
		if !ok {
			return cost, false
		}
		cost += c
	case 3:
		cost += costMapping
	case 4: // location
		cost += costLocation
		lines := 0
		for body := f.body; len(body) > 0; {
			g, ok := nextField(&body)
			if !ok {
				return cost, false
			}
			if g.num == 4 {
				if lines++; lines > longLines {
					cost += costLongLine
				} else {
					cost += costLine
				}
			}
		}
	case 5:
		cost += costFunction
	case 6:
		cost += costString + int64(len(f.body))
	case 13: // comments, packed
		cost += costValue * varints(f.wire, f.body)
	}
	return cost, true
}

// sampleCost estimates the memory of one decoded Sample message.
func sampleCost(body []byte) (int64, bool) {
	cost := int64(costSample)
	for len(body) > 0 {
		f, ok := nextField(&body)
		if !ok {
			return cost, false
		}
		switch f.num {
		case 1:
			cost += costID * varints(f.wire, f.body)
		case 2:
			cost += costValue * varints(f.wire, f.body)
		case 3:
			cost += costLabel
		}
	}
	return cost, true
}

// varints counts the values of a repeated integer field: one when not
// packed, the number of varints in body when packed.
func varints(wire int, body []byte) int64 {
	if wire != 2 {
		return 1
	}
	var n int64
	for _, c := range body {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// nextField reads the field at the start of *b and moves *b past it. It
// reports false if *b does not start with a well-formed field with a
// valid number (validNum).
func nextField(b *[]byte) (field, bool) {
	f, rest, err := readField(*b)
	if err != nil || !validNum(f) {
		return field{}, false
	}
	*b = rest
	return f, true
}

// validNum reports whether f's number is one protobuf allows: 1 to 2^29.
func validNum(f field) bool { return f.num != 0 && f.num <= 1<<29 }

// legacyCost estimates the memory of parsing raw as a legacy text
// profile, stopping once the estimate is over limit: its record lines (those not starting with '#') and its
// addresses ("0x" on record lines).
func legacyCost(raw []byte, limit int64) int64 {
	var cost int64
	for len(raw) > 0 && cost <= limit {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		line = bytes.TrimLeft(line, " \t")
		if len(line) == 0 {
			continue
		}
		if line[0] == '#' {
			cost += costLegacyComment
			continue
		}
		cost += costLegacyRecord + costLegacyAddress*int64(bytes.Count(line, []byte("0x")))
	}
	return cost
}
