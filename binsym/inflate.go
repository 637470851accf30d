package binsym

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Compressed DWARF sections (SHF_COMPRESSED, or the older .zdebug_*) are
// inflated with a cap, so that a small file cannot claim gigabytes.

// The compressed sections of an executable may inflate, together, to at
// most InflateFactor times the file's size and at most MaxInflatedTotal
// bytes. A real Go executable's DWARF inflates to 2 to 5 times its
// compressed size, and is a part of the file: the limit is far above it.
const (
	InflateFactor    = 20
	MaxInflatedTotal = 2 << 30
)

// An Option changes how Open reads an executable.
type Option func(*Binary)

// MaxInflated sets the most bytes the executable's compressed sections may
// inflate to, all together, instead of InflateFactor times the file's size
// (at most MaxInflatedTotal); n is at most math.MaxInt/2.
func MaxInflated(n uint64) Option {
	return func(b *Binary) { b.inflateLimit, b.inflateChosen = min(n, math.MaxInt/2), true }
}

// InflateError says that a compressed section of an executable claims to
// inflate to more than the limit, Limit bytes for all compressed sections
// together (InflateFactor times the file's size, at most
// MaxInflatedTotal, unless MaxInflated chose it), or that it inflates to
// more than the Size bytes it claims (Beyond).
type InflateError struct {
	Section string
	Size    uint64 // what the section's header claims
	Limit   uint64
	Chosen  bool // MaxInflated set the limit
	Beyond  bool // the section inflates to more than Size
}

func (e *InflateError) Error() string {
	if e.Beyond {
		return fmt.Sprintf("compressed section %s inflates to more than the %d bytes its header claims", e.Section, e.Size)
	}
	if e.Chosen {
		return fmt.Sprintf("compressed section %s claims %d bytes: over the limit of %d bytes chosen for all compressed sections", e.Section, e.Size, e.Limit)
	}
	return fmt.Sprintf("compressed section %s claims %d bytes: over the limit of %d bytes for all compressed sections (%d times the file's size, at most %d)",
		e.Section, e.Size, e.Limit, InflateFactor, uint64(MaxInflatedTotal))
}

// compressed reports whether s is stored compressed, and then its
// inflated size (for a .zdebug section, Open reads it from its header).
func compressed(s *elf.Section) (uint64, bool) {
	if s.Type == elf.SHT_NOBITS {
		return 0, false
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		return s.Size, true
	}
	if strings.HasPrefix(s.Name, ".zdebug") {
		var hdr [4]byte
		if _, err := s.ReadAt(hdr[:], 0); err != nil || string(hdr[:]) != "ZLIB" {
			return 0, false // not compressed after all: debug/elf reads it as is
		}
		s.Open() // sets s.Size from the header
		return s.Size, true
	}
	return 0, false
}

// checkInflated refuses an executable whose compressed sections claim more
// than the limit together.
func (b *Binary) checkInflated() error {
	var total uint64
	for _, s := range b.elf.Sections {
		if n, ok := compressed(s); ok {
			if n > b.inflateLimit-total {
				return &InflateError{Section: s.Name, Size: n, Limit: b.inflateLimit, Chosen: b.inflateChosen}
			}
			total += n
		}
	}
	return nil
}

// sectionData returns the contents of s, inflated if compressed: reading no
// more than it claims, which checkInflated bounded.
func (b *Binary) sectionData(s *elf.Section) ([]byte, error) {
	n, ok := compressed(s)
	if !ok {
		return s.Data()
	}
	// Grow as the bytes arrive, from a first buffer of the claimed size
	// when that is moderate: a false claim costs no more than the bytes.
	buf := make([]byte, 0, min(n, 64<<20))
	r := s.Open()
	var chunk [32 << 10]byte
	for {
		k, err := r.Read(chunk[:])
		if uint64(len(buf)+k) > n {
			return nil, &InflateError{Section: s.Name, Size: n, Limit: b.inflateLimit, Beyond: true}
		}
		buf = append(buf, chunk[:k]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, readPartError(s.Name, err)
		}
	}
	if uint64(len(buf)) != n {
		return nil, readPartError(s.Name, fmt.Errorf("inflated to %d bytes, its header says %d: %w", len(buf), n, io.ErrUnexpectedEOF))
	}
	return buf, nil
}
