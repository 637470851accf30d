// Package binsym reads what a heap report needs from the Go executable that
// wrote a heap dump: function names and source positions by PC (pclntab),
// argument frame sizes, symbols of globals, itabs and closures (the ELF
// symbol table), and the types behind runtime type descriptors (DWARF, or
// without it the descriptors themselves).
//
// It reads linux ELF executables for amd64 and arm64 built by Go 1.20 or
// later, using only the standard library. Open reads the pclntab and the
// symbol table (about 10 ms for an 11 MB executable); the pclntab is
// searched in place. DWARF is decoded only when a type is first asked for,
// or when LoadTypes is called, which a caller may do in the background
// while it reads a dump (about 70-150 ms for the same executable). An
// executable linked with -s -w, as `go run` and `go test` link, has no
// DWARF: its types are decoded from the runtime type descriptors, one at a
// time as they are asked for.
//
// Addresses passed to and returned by a Binary are run-time addresses. For a
// non-PIE executable they equal the link-time addresses in the file. A PIE
// executable is loaded at an address the dump does not record; call SetBias
// (BiasFor computes it from a function's name and run-time entry PC, both of
// which a dump's stack frame records give) before looking anything up.
//
// MatchGoVersion, MatchSegment and a FrameMatcher check that an executable
// is the one that wrote a dump, with a *MismatchError naming the first
// difference. Compressed DWARF is inflated within a cap (InflateError).
//
// A corrupt executable costs time and memory in proportion to its size, or
// less: past caps far above what real programs have (cmd/go: 20,000
// symbols, 54,000 top-level DWARF entries; node: 110,000 symbols), the
// symbol table or the DWARF index is left unread, and Missing says which
// and why; a type whose reading goes past them is unknown, and LoadTypes
// returns the first such error.
//
// A Binary is safe for concurrent use once SetBias, if needed, has been
// called.
package binsym

import (
	"debug/buildinfo"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sync"
)

// A Binary is an opened Go executable.
type Binary struct {
	path        string
	closer      io.Closer // the file, or nil
	elf         *elf.File
	goVersion   string
	experiments string // GOEXPERIMENT the executable was built with
	arch        string
	pie         bool
	bias        uint64

	inflateLimit  uint64 // most bytes the compressed sections may inflate to
	inflateChosen bool   // MaxInflated set inflateLimit

	pcln    *pclntab // nil if the executable has no usable pclntab
	pclnErr error    // why pcln is nil

	locOnce [2]sync.Once // .debug_loclists, .debug_loc
	locData [2][]byte

	mdOnce sync.Once
	md     uint64 // link address of runtime.firstmoduledata
	mdOK   bool

	symOnce sync.Once
	syms    *symtab
	symErr  error

	typesOnce sync.Once
	types     *typeIndex
	typesErr  error

	descOnce  sync.Once
	desc      *descIndex // runtime type descriptors, used without DWARF
	descErr   error
	forceDesc bool // use the descriptors even with DWARF (tests)

	relaOnce sync.Once
	rela     map[uint64]uint64 // link address -> addend of RELATIVE relocations

	itabOnce sync.Once
	itabs    map[uint64]bool // link addresses of static itabs
}

// ErrNotGo is returned (wrapped) by Open for an ELF file that is not a Go
// executable.
var ErrNotGo = errors.New("not a Go executable")

// Open opens the Go executable at path. It fails for a missing file, a file
// that is not ELF, an architecture other than amd64 and arm64, and a file
// that is not a Go executable. A stripped or PIE executable opens; Missing
// says what it cannot give.
func Open(path string, opts ...Option) (*Binary, error) {
	pathErr := func(err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return &OpenError{Path: path, Err: errors.New("no such file")}
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &OpenError{Path: path, Err: err}
	}
	// Only a regular file: opening a FIFO would wait for a writer.
	if st, err := os.Stat(path); err != nil {
		return nil, pathErr(err)
	} else if err := notRegular(st); err != nil {
		return nil, &OpenError{Path: path, Err: err}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, pathErr(err)
	}
	st, err := f.Stat()
	if err == nil {
		err = notRegular(st)
	}
	var b *Binary
	if err == nil {
		b, err = newBinary(path, f, st.Size(), f, opts)
	}
	if err != nil {
		f.Close()
		return nil, &OpenError{Path: path, Err: err}
	}
	return b, nil
}

// maxSections is the most section headers an executable may have when its
// first header counts them (e_shnum 0, for 0xff00 and more): a linked
// executable has a few dozen.
const maxSections = 1 << 16

// checkSectionCount refuses an ELF file whose first section header counts
// more than maxSections headers: debug/elf makes a Section of every one
// before it checks any (4M headers in a hole after an executable: 1.1 GB
// and 3.3 s before it found no string table). What else is wrong with the
// header, elf.NewFile says.
func checkSectionCount(r io.ReaderAt) error {
	var id [64]byte
	n, _ := r.ReadAt(id[:], 0)
	if n < 16 || string(id[:4]) != elf.ELFMAG {
		return nil
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(id[elf.EI_DATA]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	// Where each class's header keeps e_shoff and e_shnum, where a section
	// header keeps sh_size, and the size of those words.
	var shoffAt, shnumAt, sizeAt, word int
	switch elf.Class(id[elf.EI_CLASS]) {
	case elf.ELFCLASS32:
		shoffAt, shnumAt, sizeAt, word = 0x20, 0x30, 20, 4
	case elf.ELFCLASS64:
		shoffAt, shnumAt, sizeAt, word = 0x28, 0x3c, 32, 8
	default:
		return nil
	}
	read := func(b []byte) uint64 {
		if word == 8 {
			return bo.Uint64(b)
		}
		return uint64(bo.Uint32(b))
	}
	if n < shnumAt+2 {
		return nil
	}
	shoff, shnum := read(id[shoffAt:]), bo.Uint16(id[shnumAt:])
	if shnum != 0 || shoff == 0 || shoff > math.MaxInt64-64 {
		return nil
	}
	var sh [8]byte
	if _, err := r.ReadAt(sh[:word], int64(shoff)+int64(sizeAt)); err != nil {
		return nil
	}
	count := read(sh[:])
	if count > maxSections {
		return fmt.Errorf("not an ELF executable: its first section header counts %d section headers, more than the %d read", count, maxSections)
	}
	return nil
}

// notRegular returns why the file st describes is not a regular file, or
// nil.
func notRegular(st fs.FileInfo) error {
	switch m := st.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return errors.New("is a directory")
	default:
		return fmt.Errorf("not a regular file (%v)", m.Type())
	}
}

// newBinary reads the executable of size bytes that r reads; c, if not nil,
// is closed by Close.
func newBinary(path string, r io.ReaderAt, size int64, c io.Closer, opts []Option) (*Binary, error) {
	if err := checkSectionCount(r); err != nil {
		return nil, err
	}
	ef, err := elf.NewFile(r)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("not an ELF executable: %v", err)
		}
		return nil, readPartError("ELF headers", err)
	}
	b := &Binary{path: path, closer: c, elf: ef}
	b.inflateLimit = min(InflateFactor*uint64(max(size, 0)), MaxInflatedTotal, math.MaxInt/2)
	for _, o := range opts {
		o(b)
	}
	switch {
	case ef.Class != elf.ELFCLASS64 || ef.Data != elf.ELFDATA2LSB:
		return nil, fmt.Errorf("unsupported ELF class %v, %v (want 64-bit little-endian)", ef.Class, ef.Data)
	case ef.Machine == elf.EM_X86_64:
		b.arch = "amd64"
	case ef.Machine == elf.EM_AARCH64:
		b.arch = "arm64"
	default:
		return nil, fmt.Errorf("unsupported architecture %v (want amd64 or arm64)", ef.Machine)
	}
	switch ef.Type {
	case elf.ET_EXEC:
	case elf.ET_DYN:
		b.pie = true
	default:
		return nil, fmt.Errorf("ELF type %v is not an executable", ef.Type)
	}
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOBITS && s.Type != elf.SHT_NULL && (s.Offset > uint64(size) || s.FileSize > uint64(size)-s.Offset) {
			return nil, fmt.Errorf("section %s: %d bytes at offset %d run past the end of the file (%d bytes): truncated or corrupt",
				s.Name, s.FileSize, s.Offset, size)
		}
	}
	if err := b.checkInflated(); err != nil {
		return nil, err
	}
	info, err := buildinfo.Read(r)
	if err != nil {
		if err.Error() == ErrNotGo.Error() {
			return nil, fmt.Errorf("%w (no Go build information)", ErrNotGo)
		}
		return nil, fmt.Errorf("%w: %v", ErrNotGo, err)
	}
	b.goVersion = info.GoVersion
	for _, s := range info.Settings {
		if s.Key == "GOEXPERIMENT" {
			b.experiments = s.Value
		}
	}
	sec := ef.Section(".gopclntab")
	if sec == nil {
		sec = ef.Section(".data.rel.ro.gopclntab") // a PIE before Go 1.23
	}
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil, fmt.Errorf("%w: no .gopclntab section", ErrNotGo)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, readPartError(".gopclntab", err)
	}
	if b.pcln, err = b.newPclntab(data, sec.Addr); err != nil {
		// Functions are unknown, symbols and types may still be.
		b.pclnErr = fmt.Errorf(".gopclntab: %v", err)
	}
	return b, nil
}

// readError describes an error reading part of the executable at path,
// calling a short read a truncated file.
func readError(path, what string, err error) error {
	return &OpenError{Path: path, Err: readPartError(what, err)}
}

// readPartError is readError without the executable's path.
func readPartError(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated file: reading %s: %v", what, err)
	}
	return fmt.Errorf("reading %s: %w", what, err)
}

// OpenError is an error of Open, or of reading the executable later: what
// went wrong (Err) with which file (Path). Its text is "binary PATH: ERR".
type OpenError struct {
	Path string
	Err  error
}

func (e *OpenError) Error() string { return "binary " + e.Path + ": " + e.Err.Error() }

// Unwrap returns Err, so that errors.Is finds ErrNotGo.
func (e *OpenError) Unwrap() error { return e.Err }

// Close closes the executable file. Types and functions already returned stay
// valid; further lookups that need the file fail.
func (b *Binary) Close() error {
	if b.closer == nil {
		return nil
	}
	return b.closer.Close()
}

// Path returns the path the executable was opened from.
func (b *Binary) Path() string { return b.path }

// GoVersion returns the Go version that built the executable, e.g. "go1.26.8".
func (b *Binary) GoVersion() string { return b.goVersion }

// Arch returns the executable's GOARCH: "amd64" or "arm64".
func (b *Binary) Arch() string { return b.arch }

// PtrSize returns the size of a pointer in bytes (always 8).
func (b *Binary) PtrSize() int64 { return 8 }

// MinFrameSize returns the offset of the outgoing-arguments area from the
// stack pointer of a calling frame: 0 on amd64, 8 on arm64 (where the
// saved link register comes first). In a heap dump's stack frame record, a
// pointer at frame offset [MinFrameSize, MinFrameSize+ArgsSize(callee)) is an
// argument of the callee (the frame one level deeper), not of the caller.
func (b *Binary) MinFrameSize() int64 {
	if b.arch == "arm64" {
		return 8
	}
	return 0
}

// PIE reports whether the executable is position independent. Its run-time
// addresses differ from its link-time ones by a load bias that heap dumps do
// not record: see SetBias and BiasFor.
func (b *Binary) PIE() bool { return b.pie }

// SetBias sets the load bias: run-time address minus link-time address. It
// is 0 for a non-PIE executable. Call it before any lookup, not concurrently
// with one.
func (b *Binary) SetBias(bias uint64) { b.bias = bias }

// Bias returns the load bias set by SetBias.
func (b *Binary) Bias() uint64 { return b.bias }

// BiasFor returns the load bias implied by the function funcName having its
// entry at the run-time address entry, as a heap dump's stack frame records
// give them. It fails with a *MismatchError if the executable has no such
// function or the implied bias is not page aligned. For a non-PIE
// executable the bias is 0 unless the dump was written by a different
// build. Lookups by name scan the functions at first, and index them by
// name once there have been a few.
func (b *Binary) BiasFor(funcName string, entry uint64) (uint64, error) {
	link, ok := b.pcln.entryByName(funcName)
	if !ok {
		return 0, b.mismatch("function "+funcName, fmt.Sprintf("it at %#x", entry), "no such function")
	}
	bias := entry - link
	if bias%4096 != 0 {
		return 0, b.mismatch("function "+funcName, fmt.Sprintf("it at %#x", entry),
			fmt.Sprintf("it at %#x, a load bias of %#x that is not page aligned", link, bias))
	}
	return bias, nil
}

// HasSymbols reports whether the executable has an ELF symbol table (it has
// none when linked with -s).
func (b *Binary) HasSymbols() bool {
	s := b.elf.Section(".symtab")
	return s != nil && s.Type == elf.SHT_SYMTAB
}

// HasDWARF reports whether the executable has DWARF type information (it has
// none when linked with -w or -s).
func (b *Binary) HasDWARF() bool {
	return b.elf.Section(".debug_info") != nil || b.elf.Section(".zdebug_info") != nil
}

// Missing describes, one item a string, what this executable cannot give. It
// is empty for an unstripped non-PIE executable. It reads the DWARF index,
// or without DWARF the types section, to say whether types can be had.
func (b *Binary) Missing() []string {
	var m []string
	if !b.HasSymbols() {
		m = append(m, "no ELF symbol table (linked with -s): names of globals, itabs and other symbols are unknown")
	} else if t, err := b.symbols(); err != nil {
		m = append(m, fmt.Sprintf("ELF symbol table unreadable (%v): names of globals, itabs and other symbols are unknown", err))
	} else if t.corrupt > 0 {
		m = append(m, fmt.Sprintf("%d corrupt ELF symbols left out (the first: %s): what they name is unknown", t.corrupt, t.firstCorrupt))
	}
	if b.HasDWARF() && !b.forceDesc && b.typeIndex() == nil {
		m = append(m, fmt.Sprintf("DWARF unreadable (%v): types come from the runtime type descriptors", b.typesErr))
	}
	if !b.HasDWARF() || b.forceDesc {
		why := "no DWARF (linked with -w or -s)"
		if b.HasDWARF() {
			why = "DWARF not used"
		}
		if b.descIndex() == nil {
			m = append(m, fmt.Sprintf("%s and no runtime type descriptors (%v): types of objects, fields and globals are unknown", why, b.descErr))
		} else {
			m = append(m, why+": types come from the runtime type descriptors; the types of globals (GlobalType) and the captured variables of closures (ClosureType) are unknown")
		}
	}
	if b.pcln == nil {
		m = append(m, fmt.Sprintf("function names and source positions are unknown: %v", b.pclnErr))
	} else if !b.pcln.hasGofunc {
		m = append(m, "no go:func.* symbol: inlined frames are not expanded")
	}
	if b.pie && b.bias == 0 {
		m = append(m, "position-independent executable (PIE) and no load bias set: addresses from a dump cannot be mapped to functions, globals or types")
	}
	return m
}

// sectionAt returns the allocated section holding the link-time address a.
// A corrupt allocated section marked compressed, which debug/elf gives no
// ReaderAt, holds nothing.
func (b *Binary) sectionAt(a uint64) *elf.Section {
	for _, s := range b.elf.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.ReaderAt != nil && s.Addr <= a && a-s.Addr < s.Size {
			return s
		}
	}
	return nil
}

// readLink reads n bytes at the link-time address a from the file. It fails
// for addresses in no section or in a section with no file contents (bss).
func (b *Binary) readLink(a uint64, n int) ([]byte, bool) {
	s := b.sectionAt(a)
	if s == nil || s.Type == elf.SHT_NOBITS || a-s.Addr+uint64(n) > s.Size {
		return nil, false
	}
	buf := make([]byte, n)
	if _, err := s.ReadAt(buf, int64(a-s.Addr)); err != nil {
		return nil, false
	}
	return buf, true
}

// linkWord reads the pointer word at the link address a: in a PIE, where
// the file holds 0, the addend of the relocation that fills it. It returns
// 0 for an address with no file contents.
func (b *Binary) linkWord(a uint64) uint64 {
	buf, ok := b.readLink(a, 8)
	if !ok {
		return 0
	}
	return b.linkValue(a, binary.LittleEndian.Uint64(buf))
}

// linkValue returns the pointer word at the link address a, whose file
// contents are v: in a PIE, v is 0 and the relocation's addend is the
// word.
func (b *Binary) linkValue(a, v uint64) uint64 {
	if v == 0 && b.pie {
		return b.relative(a)
	}
	return v
}

// toLink converts a run-time address to a link-time one.
func (b *Binary) toLink(a uint64) uint64 { return a - b.bias }

// toRun converts a link-time address to a run-time one.
func (b *Binary) toRun(a uint64) uint64 { return a + b.bias }
