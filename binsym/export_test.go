package binsym

import (
	"debug/dwarf"
	"fmt"
	"maps"
	"slices"
)

// TestExe is an unstripped Go executable, set by TestMain.
var TestExe string

// Test386Exe is TestExe's program built for 386: a 32-bit ELF file.
var Test386Exe string

// CheckSplitIndex indexes b's DWARF in one piece, with debug/dwarf's
// Reader alone, and split in n, skipping children by their abbreviations
// (dwarfSkipper), and reports any difference.
func CheckSplitIndex(b *Binary, n int) (units int, err error) {
	d, info, abbrev, err := b.dwarf()
	if err != nil {
		return 0, err
	}
	whole := walkUnits(d, info, nil, 0, 0)
	chunks := splitUnits(info, n)
	if len(chunks) < 2 || len(chunks) > n {
		return 0, fmt.Errorf("split in %d, want 2 to %d", len(chunks), n)
	}
	var parts []*indexPart
	for _, c := range chunks {
		parts = append(parts, walkUnits(d, info, abbrev, c[0], c[1]))
	}
	merged := &indexPart{byRT: map[uint64]dwarf.Offset{}, global: map[string]dwarf.Offset{}, funcs: map[uint64]dwarf.Offset{}}
	for _, p := range parts {
		if p.err != nil {
			return 0, p.err
		}
		maps.Copy(merged.byRT, p.byRT)
		maps.Copy(merged.global, p.global)
		maps.Copy(merged.funcs, p.funcs)
		merged.names = append(merged.names, p.names...)
	}
	switch {
	case whole.err != nil:
		return 0, whole.err
	case !maps.Equal(whole.byRT, merged.byRT):
		return 0, fmt.Errorf("runtime types differ: %d, %d", len(whole.byRT), len(merged.byRT))
	case !maps.Equal(whole.global, merged.global):
		return 0, fmt.Errorf("globals differ: %d, %d", len(whole.global), len(merged.global))
	case !maps.Equal(whole.funcs, merged.funcs):
		return 0, fmt.Errorf("functions differ: %d, %d", len(whole.funcs), len(merged.funcs))
	case !slices.Equal(whole.names, merged.names):
		return 0, fmt.Errorf("names differ: %d, %d", len(whole.names), len(merged.names))
	}
	return len(whole.names), nil
}

// UseDescriptors makes b read types from its runtime type descriptors even
// if it has DWARF. Call it before any lookup.
func UseDescriptors(b *Binary) { b.forceDesc = true }

// DWARFTypeAddrs returns the run-time addresses of the type descriptors
// that b's DWARF describes, in order.
func DWARFTypeAddrs(b *Binary) []uint64 {
	x := b.typeIndex()
	if x == nil {
		return nil
	}
	var addrs []uint64
	for rt := range x.byRT {
		addrs = append(addrs, b.toRun(x.types+rt))
	}
	slices.Sort(addrs)
	return addrs
}

// TestStrippedExe is the test program linked with -s -w, set by TestMain.
var TestStrippedExe string

// StaticItab returns the address of a static itab whose Type is named
// typeName and whose interface is named inter: the go:itab symbol, or in a
// Go 1.27 executable, which gives itabs no symbol, one of the module's.
func StaticItab(b *Binary, typeName, inter string) (uint64, bool) {
	if s, ok := b.LookupSymbol("go:itab." + typeName + "," + inter); ok {
		return s.Addr, true
	}
	for _, a := range slices.Sorted(maps.Keys(b.itabLinks())) {
		typ, ok := b.ItabType(b.toRun(a))
		in := b.TypeAt(b.toRun(b.staticWord(a)))
		if t := b.TypeAt(typ); ok && t != nil && t.Name == typeName && in != nil && in.Name == inter {
			return b.toRun(a), true
		}
	}
	return 0, false
}

// DropLocalSuffix is dropLocalSuffix.
var DropLocalSuffix = dropLocalSuffix
