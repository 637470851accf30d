// Package bytesize parses and formats byte counts such as "512KiB", "50MiB"
// and "1GiB", and provides a pflag.Value so commands can take them as flags.
package bytesize

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a count of bytes.
type Size int64

// Common sizes.
const (
	B   Size = 1
	KiB Size = 1 << 10
	MiB Size = 1 << 20
	GiB Size = 1 << 30
	TiB Size = 1 << 40
)

var units = []struct {
	suffix string
	mult   Size
}{
	// Longest suffixes first so "KiB" is not read as "B".
	{"kib", KiB}, {"mib", MiB}, {"gib", GiB}, {"tib", TiB},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000}, {"tb", 1000 * 1000 * 1000 * 1000},
	{"k", KiB}, {"m", MiB}, {"g", GiB}, {"t", TiB},
	{"b", B},
}

// Parse reads a size: a non-negative number, optionally with a fraction,
// followed by an optional unit. Binary units (KiB, MiB, GiB, TiB, and the
// shorthands K, M, G, T) are powers of 1024; decimal units (kB, MB, GB, TB)
// are powers of 1000. Units are case-insensitive; a bare number is bytes.
func Parse(s string) (Size, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty size")
	}
	lower := strings.ToLower(t)
	mult := B
	num := lower
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			mult = u.mult
			num = strings.TrimSpace(lower[:len(lower)-len(u.suffix)])
			break
		}
	}
	if num == "" {
		return 0, fmt.Errorf("size %q has no number (want e.g. 512KiB, 50MiB, 1GiB)", s)
	}
	if strings.HasPrefix(num, "-") {
		return 0, fmt.Errorf("size %q is negative", s)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		if n > math.MaxInt64/int64(mult) {
			return 0, fmt.Errorf("size %q is too large", s)
		}
		return Size(n) * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid size %q (want e.g. 512KiB, 50MiB, 1GiB)", s)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Size(math.Round(v)), nil
}

// String formats s with a binary unit and one decimal, such as "50.0 MiB".
// Sizes under 1 KiB are printed as bytes: "512 B".
func (s Size) String() string { return Format(int64(s)) }

// Format formats n bytes like Size.String. Negative values keep their sign.
func Format(n int64) string {
	sign := ""
	u := uint64(n)
	if n < 0 {
		sign = "-"
		u = uint64(-n)
	}
	if u < uint64(KiB) {
		return fmt.Sprintf("%s%d B", sign, u)
	}
	names := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f := float64(u) / 1024
	i := 0
	for f >= 1024 && i < len(names)-1 {
		f /= 1024
		i++
	}
	return fmt.Sprintf("%s%.1f %s", sign, f, names[i])
}

// FormatDelta formats n bytes with an explicit sign: "+50.0 MiB", "-3 B",
// and "0 B" for zero.
func FormatDelta(n int64) string {
	if n > 0 {
		return "+" + Format(n)
	}
	return Format(n)
}

// Flag is a pflag.Value holding a Size, so that "--payload 50MiB" is checked
// when the flags are parsed and a bad value names its flag.
type Flag struct{ Size *Size }

// NewFlag returns a Flag that stores into p, which is set to def first.
func NewFlag(p *Size, def Size) Flag {
	*p = def
	return Flag{Size: p}
}

// String returns the current value in the form Parse accepts.
func (f Flag) String() string {
	if f.Size == nil {
		return "0"
	}
	return Compact(*f.Size)
}

// Set parses v into the flag's Size.
func (f Flag) Set(v string) error {
	s, err := Parse(v)
	if err != nil {
		return err
	}
	*f.Size = s
	return nil
}

// Type names the flag's value type in --help.
func (Flag) Type() string { return "size" }

// Compact formats s exactly, in the largest binary unit that divides it:
// "50MiB", "512KiB", "1000B". Parse(Compact(s)) == s.
func Compact(s Size) string {
	if s == 0 {
		return "0"
	}
	for _, u := range []struct {
		name string
		mult Size
	}{{"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}} {
		if s%u.mult == 0 {
			return strconv.FormatInt(int64(s/u.mult), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}
