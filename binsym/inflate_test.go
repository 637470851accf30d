package binsym_test

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// withInflatedSize copies the test program with the inflated size that the
// compression header of its .debug_info claims changed by set.
func withInflatedSize(t *testing.T, set func(size uint64) uint64) string {
	t.Helper()
	return patchedCopy(t, func(f *elf.File, data []byte) {
		s := f.Section(".debug_info")
		if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 {
			t.Skip("the test program's .debug_info is not compressed")
		}
		// Elf64_Chdr: type, reserved, size, alignment.
		size := binary.LittleEndian.Uint64(data[s.Offset+8:])
		binary.LittleEndian.PutUint64(data[s.Offset+8:], set(size))
	})
}

// A compressed section that claims more than the limit is refused by
// Open, before anything is inflated.
func TestInflateClaimOverLimit(t *testing.T) {
	path := withInflatedSize(t, func(uint64) uint64 { return 6 << 30 })
	b, err := binsym.Open(path)
	if err == nil {
		b.Close()
		t.Fatal("Open accepted a .debug_info of 6 GiB")
	}
	var ie *binsym.InflateError
	var oe *binsym.OpenError
	if !errors.As(err, &ie) || !errors.As(err, &oe) || ie.Section != ".debug_info" || ie.Size != 6<<30 {
		t.Fatalf("error %v, want an *OpenError holding an *InflateError of .debug_info", err)
	}
	st, _ := os.Stat(path)
	if ie.Limit != min(uint64(binsym.InflateFactor*st.Size()), binsym.MaxInflatedTotal) {
		t.Errorf("limit %d for a file of %d bytes", ie.Limit, st.Size())
	}
	if !strings.Contains(err.Error(), ".debug_info") || !strings.Contains(err.Error(), "limit") {
		t.Errorf("error %q does not name the section and the limit", err)
	}
}

// A compressed section that inflates to more than it claims is cut where
// its claim ends; one that inflates to less is truncated. Types then come
// from the runtime type descriptors, and LoadTypes says why.
func TestInflateOtherThanClaimed(t *testing.T) {
	for _, tt := range []struct {
		name  string
		delta int64
		want  func(error) bool
	}{
		{"more", -4096, func(err error) bool { var ie *binsym.InflateError; return errors.As(err, &ie) }},
		{"less", 4096, func(err error) bool { return strings.Contains(err.Error(), "truncated") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := open(t, withInflatedSize(t, func(n uint64) uint64 { return uint64(int64(n) + tt.delta) }))
			err := b.LoadTypes()
			if err == nil || !tt.want(err) {
				t.Fatalf("LoadTypes: %v", err)
			}
			if !strings.Contains(err.Error(), ".debug_info") {
				t.Errorf("error %q does not name the section", err)
			}
			if typ := b.TypeByName("main.Upload"); typ == nil {
				t.Errorf("no type main.Upload from the descriptors")
			}
		})
	}
}

// MaxInflated replaces the default cap on what compressed sections may
// inflate to: the test program's compressed DWARF is refused under what it
// needs, with an error that says the limit was chosen, and read above it.
func TestMaxInflated(t *testing.T) {
	_, err := binsym.Open(progs.exe, binsym.MaxInflated(1024))
	var ie *binsym.InflateError
	if !errors.As(err, &ie) || !ie.Chosen || ie.Limit != 1024 || !strings.Contains(err.Error(), "chosen") {
		t.Fatalf("MaxInflated(1024): error %v, want an InflateError of the chosen limit", err)
	}
	b, err := binsym.Open(progs.exe, binsym.MaxInflated(1<<30))
	if err != nil {
		t.Fatalf("MaxInflated(1GiB): %v", err)
	}
	defer b.Close()
	if err := b.LoadTypes(); err != nil {
		t.Errorf("MaxInflated(1GiB): LoadTypes: %v", err)
	}
}
