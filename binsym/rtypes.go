package binsym

import (
	"debug/elf"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Runtime type descriptors.
//
// Every type a Go program uses at run time has a descriptor
// (internal/abi.Type) in its module's types section, [runtime.types,
// runtime.etypes): the address that an empty interface's first word and an
// itab's Type hold. The descriptors stay in the executable when it is
// linked with -s -w, as `go run` and `go test` link. When the executable
// has no DWARF, types are decoded from them. The layout read here is that
// of Go 1.20 to 1.27 on 64-bit targets: abi.Type has not changed, the kind
// byte has carried flags above its low five bits until 1.26, and the map
// type descriptor grew when maps became swiss tables (1.24) and again with
// key and element strides (1.27).
//
// A descriptor gives a type's name as the runtime prints it, qualified by
// package names ("innerpkg.Item"), its kind, size, elements, key, array
// length, struct fields, parameters and methods. From these binsym rebuilds
// the name the linker gives the type and DWARF repeats, qualified by
// escaped package paths ("github.com/x/inner.Item", "gopkg.in/yaml%2ev3.Node"),
// unexported fields and methods of literals included ("struct { main.ctx
// context.Context }"), with the "noalg." prefix of the compiler's internal
// types (map groups, closure contexts). Checked against DWARF on every type
// of cmd/go and of test programs built by Go 1.22 to 1.27, names differ
// only (a type defined inside a function is "main.local" either way:
// the reader of DWARF drops the "·1" its linker adds, see dropLocalSuffix):
//   - for internal types whose parts have no equality function either,
//     like the arrays of a Go 1.23 map bucket, which get no "noalg."
//     prefix (nothing tells them from user types);
//   - for the group of a map whose keys or elements are over 128 bytes,
//     stored indirectly, which is named with pointers to them.
//
// The pointer words of a descriptor are link addresses; in a PIE they are
// zero in the file and filled in by R_*_RELATIVE relocations, which are
// read instead. Offsets (names, the method types) are relative to the
// section start.

// Layout of internal/abi on 64-bit targets.
const (
	abiTypeSize     = 48 // abi.Type
	uncommonSize    = 16 // abi.UncommonType
	structFieldSize = 24 // abi.StructField
	imethodSize     = 8  // abi.Imethod
	methodSize      = 16 // abi.Method

	tflagUncommon  = 1 << 0
	tflagExtraStar = 1 << 1
	tflagNamed     = 1 << 2
	kindMask       = 1<<5 - 1 // the kind byte's flags are above (Go 1.25 and earlier)

	nameHasTag     = 1 << 1
	nameHasPkgPath = 1 << 2
	nameEmbedded   = 1 << 3

	chanRecv = 1
	chanSend = 2

	maxNameLen   = 1 << 20 // longer names are corrupt
	maxArray     = 1 << 16 // more struct fields or interface methods are corrupt
	maxTypeSize  = 1 << 48 // larger sizes are corrupt
	maxNameDepth = 64      // deeper unnamed types are named by the runtime's string
)

// descIndex decodes the runtime type descriptors of an executable.
type descIndex struct {
	b      *Binary
	start  uint64 // link address of the types section (runtime.types)
	data   string // the section, [runtime.types, runtime.etypes): names are substrings of it
	swiss  bool   // maps are swiss tables (Go 1.24 and later)
	map127 bool   // abi.MapType has Go 1.27's key and element strides

	mu    sync.Mutex
	built map[uint64]*Type // by link address; nil for an invalid descriptor
	ptrTo map[*Type]*Type  // pointer types made up for slices' fields
	basic map[reflect.Kind]*Type
	err   error // the first corrupt descriptor met

	// What decoding keeps is bounded, so that a corrupt section whose
	// descriptors all claim the same long arrays cannot multiply the
	// memory: a valid one has at most one struct field per 24 bytes, and
	// composed names of a size near the runtime's names, which it holds.
	parts, maxParts         int // struct fields and parameters decoded and kept
	nameBytes, maxNameBytes int // bytes of the names composed
	// decoded counts the fields, parameters and methods every decode
	// reads, kept or not: up to maxArray a descriptor, whose arrays a
	// corrupt section can make them all share. It may reach maxDecoded,
	// a few times maxParts: the walk and the builds decode a valid
	// descriptor once each.
	decoded, maxDecoded int

	// Filled by walk, on first need.
	walked  bool
	all     []uint64          // descriptors reachable from the module's tables
	byName  map[string]uint64 // named types among them
	headers map[string]*Type  // made-up map and channel headers, by name
	names   map[string]*Type  // every type built, by name: for typeByName
}

// descIndex returns the executable's type descriptors, reading the types
// section on first use, or nil if they cannot be read (b.descErr says why).
func (b *Binary) descIndex() *descIndex {
	b.descOnce.Do(func() {
		b.desc, b.descErr = b.loadDescriptors()
	})
	return b.desc
}

func (b *Binary) loadDescriptors() (*descIndex, error) {
	start, okS := b.linkSymbol("runtime.types")
	end, okE := b.linkSymbol("runtime.etypes")
	if !okS || !okE {
		m, ok := b.moduledataAddr()
		if !ok {
			return nil, fmt.Errorf("binary %s: no runtime.types symbol and no module data: runtime type descriptors are unknown", b.path)
		}
		l := b.mdLayout(m)
		start, end = b.moduledataWord(m, l.types), b.moduledataWord(m, l.etypes)
	}
	s := b.sectionAt(start)
	switch {
	case s == nil || s.Type == elf.SHT_NOBITS:
		return nil, fmt.Errorf("binary %s: the types section at %#x is not in the file", b.path, start)
	case end < start || end-start > s.Size-(start-s.Addr) || end-start > 1<<31:
		return nil, fmt.Errorf("binary %s: bad types section [%#x, %#x) in section %s", b.path, start, end, s.Name)
	}
	var data strings.Builder
	data.Grow(int(end - start))
	if _, err := io.Copy(&data, io.NewSectionReader(s, int64(start-s.Addr), int64(end-start))); err != nil {
		return nil, readError(b.path, "the types section", err)
	}
	if data.Len() != int(end-start) {
		return nil, readError(b.path, "the types section", io.ErrUnexpectedEOF)
	}
	return &descIndex{
		b:            b,
		start:        start,
		data:         data.String(),
		swiss:        b.swissMaps(),
		map127:       b.layout127(),
		built:        map[uint64]*Type{},
		ptrTo:        map[*Type]*Type{},
		basic:        map[reflect.Kind]*Type{},
		maxParts:     data.Len()/8 + maxArray,
		maxDecoded:   4 * (data.Len()/8 + maxArray),
		maxNameBytes: 16*data.Len() + maxNameLen,
	}, nil
}

// swissMaps reports whether the executable's maps are swiss tables: from Go
// 1.24 on, unless built with GOEXPERIMENT=noswissmap (1.24 and 1.25).
func (b *Binary) swissMaps() bool {
	minor, ok := b.goMinor()
	if !ok {
		return true // a development version: the latest layout
	}
	return minor >= 24 && !slices.Contains(strings.Split(b.experiments, ","), "noswissmap")
}

// typeAt returns the type whose descriptor is at the link address a, or
// nil if there is none.
func (x *descIndex) typeAt(a uint64) *Type {
	x.mu.Lock()
	defer x.mu.Unlock()
	if t, ok := x.built[a]; ok {
		return t
	}
	ts := x.build([]uint64{a})
	return ts[0]
}

// noteErr records the first corrupt descriptor. Called with x.mu held.
func (x *descIndex) noteErr(err error) {
	if x.err == nil {
		x.err = err
	}
}
