package profiles

import (
	"bytes"
	"fmt"

	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// The pprof decoder turns every sample, location, function and string into
// structs, slices and maps that take far more memory than their encoding:
// an empty sample is 2 bytes of proto and about 150 bytes decoded. The
// costs below are what the decoder and the analysis allocate per element,
// rounded up; decodeCost adds them up from a scan that allocates nothing,
// so a profile too large to decode is refused before it is decoded.
const (
	costSample   = 176 // Sample struct, its pointer, slice growth, analysis
	costID       = 32  // one location ID: locationIDX, Location and growth
	costValue    = 16  // one value and slice growth
	costLabel    = 160 // a label, and its map entry once decoded
	costLocation = 224 // Location struct, pointer, ID map, analysis
	costLine     = 64  // one Line of a location
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
// to about 10 times their size, and are far under the size limit.
const DecodeFactor = 8

// LegacyDecodeFactor is DecodeFactor for the legacy text formats, whose
// parser takes about 4µs per record: at the default size limit it lets
// about 500,000 records through, a few seconds of parsing.
const LegacyDecodeFactor = 2

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
)

// LimitError is a profile refused by a cap: Loader.MaxBytes, or the
// memory its decoding would take. Raising Loader.MaxBytes raises both.
type LimitError struct {
	Limit Limit
	// What says which bytes went over: "file", "download", "input",
	// "decompressed data" or "decoded profile".
	What string
	// Size is the size when it was known before reading (a file's, a
	// Content-Length), 0 when reading stopped at the cap, or the estimated
	// memory of the decoded profile.
	Size int64
	// Max is the cap.
	Max int64
	// Factor is Max / MaxBytes for LimitDecoded, 1 for LimitSize.
	Factor int64
	// MaxBytes is the Loader's MaxBytes, the setting that raises the cap.
	MaxBytes int64
}

func (e *LimitError) Error() string {
	if e.Limit == LimitDecoded {
		return fmt.Sprintf("decoding this profile would take about %s of memory, over the limit of %s (%d × the profile size limit of %s)",
			bytesize.Format(e.Size), bytesize.Format(e.Max), e.Factor, bytesize.Format(e.MaxBytes))
	}
	if e.Size <= e.Max {
		return fmt.Sprintf("the %s is over the profile size limit of %s", e.What, bytesize.Format(e.Max))
	}
	return fmt.Sprintf("the %s is %s, over the profile size limit of %s", e.What, bytesize.Format(e.Size), bytesize.Format(e.Max))
}

// checkDecodeCost refuses raw when decoding it would take more than
// DecodeFactor × maxBytes of memory (LegacyDecodeFactor for text).
func checkDecodeCost(raw []byte, maxBytes int64) error {
	factor := int64(DecodeFactor)
	cost, ok := protoCost(raw)
	if !ok {
		factor, cost = LegacyDecodeFactor, legacyCost(raw)
	}
	if limit := satMul(maxBytes, factor); cost > limit {
		return &LimitError{Limit: LimitDecoded, What: "decoded profile", Size: cost, Max: limit, Factor: factor, MaxBytes: maxBytes}
	}
	return nil
}

func satMul(a, b int64) int64 {
	if a > 0 && b > 0 && a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}

// protoCost estimates the memory of decoding raw as a profile.proto
// message. It reports false when raw is not well-formed protobuf at the
// top level (then it is no proto profile, and the text parsers get it).
func protoCost(raw []byte) (int64, bool) {
	var cost int64
	ok := eachField(raw, func(field, wire int, body []byte) bool {
		cost += costOther
		if wire != 2 {
			return true
		}
		switch field {
		case 2: // sample
			cost += costSample
			return eachField(body, func(field, wire int, body []byte) bool {
				switch field {
				case 1:
					cost += costID * varints(wire, body)
				case 2:
					cost += costValue * varints(wire, body)
				case 3:
					cost += costLabel
				}
				return true
			})
		case 3:
			cost += costMapping
		case 4: // location
			cost += costLocation
			return eachField(body, func(field, wire int, body []byte) bool {
				if field == 4 {
					cost += costLine
				}
				return true
			})
		case 5:
			cost += costFunction
		case 6:
			cost += costString + int64(len(body))
		case 13: // comments, packed
			cost += costValue * varints(wire, body)
		}
		return true
	})
	return cost, ok
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

// eachField calls fn with every field of the protobuf message in b: its
// number, wire type, and body for length-delimited fields (wire type 2).
// It stops when fn returns false, and reports false if b is not
// well-formed or fn returned false.
func eachField(b []byte, fn func(field, wire int, body []byte) bool) bool {
	for len(b) > 0 {
		tag, n := uvarint(b)
		if n <= 0 {
			return false
		}
		b = b[n:]
		field, wire := int(tag>>3), int(tag&7)
		if field == 0 {
			return false
		}
		var body []byte
		switch wire {
		case 0:
			_, n = uvarint(b)
			if n <= 0 {
				return false
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return false
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return false
			}
			b = b[4:]
		case 2:
			l, n := uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return false
			}
			body, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return false
		}
		if !fn(field, wire, body) {
			return false
		}
	}
	return true
}

// uvarint decodes a protobuf varint; n <= 0 means b holds none.
func uvarint(b []byte) (v uint64, n int) {
	for i, c := range b {
		if i == 10 {
			return 0, -1
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// legacyCost estimates the memory of parsing raw as a legacy text
// profile: its record lines (those not starting with '#') and its
// addresses ("0x" on record lines).
func legacyCost(raw []byte) int64 {
	var cost int64
	for len(raw) > 0 {
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
