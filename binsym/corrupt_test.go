package binsym

import (
	"debug/dwarf"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The tables of a corrupt executable give errors or unknown answers, never
// a panic. The seed is the test program TestMain built.

// rounds is how many corrupt copies a test tries: n by default, ten times
// as many with the environment variable CTXLEAK_LONG set (the one switch of
// the project for long sweeps).
func rounds(n int) int {
	if os.Getenv("CTXLEAK_LONG") != "" {
		return 10 * n
	}
	return n
}

func openExe(t *testing.T) *Binary {
	t.Helper()
	b, err := Open(TestExe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestCorruptPclntab(t *testing.T) {
	t.Parallel()
	b := openExe(t)
	orig := b.pcln
	defer func() { b.pcln = orig }()
	rng := rand.New(rand.NewPCG(1, 2))
	textSize := uint64(orig.functab[8*orig.nfunc]) | uint64(orig.functab[8*orig.nfunc+1])<<8 | uint64(orig.functab[8*orig.nfunc+2])<<16
	opened := 0
	for i := range rounds(40) {
		d := slices.Clone(orig.data)
		switch i % 4 {
		case 0: // a header word
			w := rng.IntN(9)
			for k := range 8 {
				d[8+8*w+k] = byte(rng.Uint32())
			}
		case 1: // bytes anywhere
			for range 200 {
				d[rng.IntN(len(d))] = byte(rng.Uint32())
			}
		case 2: // truncated
			d = d[:rng.IntN(len(d))]
		case 3: // bytes in the function table and records
			ft := len(d) - len(orig.functab)
			for range 200 {
				d[ft+rng.IntN(len(orig.functab))] = byte(rng.Uint32())
			}
		}
		p, err := b.newPclntab(d, 0)
		if err != nil {
			continue
		}
		opened++
		b.pcln = p
		for range 100 {
			pc := orig.text + rng.Uint64N(textSize+64)
			b.Func(pc)
			b.CallSite(pc)
			b.Frames(pc)
			b.ArgsSize(pc)
		}
		b.FuncByName("main.main")
	}
	if opened == 0 {
		t.Errorf("no corrupt table opened: the lookups were not exercised")
	}
}

func TestCorruptDWARF(t *testing.T) {
	t.Parallel()
	b := openExe(t)
	good, info, _, err := b.dwarf()
	if err != nil || info == nil {
		t.Fatal("no DWARF to corrupt:", err)
	}
	abbrev, err := b.elf.Section(".debug_abbrev").Data()
	if err != nil {
		t.Fatal(err)
	}
	addr, err := b.elf.Section(".debug_addr").Data()
	if err != nil {
		t.Fatal(err)
	}
	// Corrupt the bytes where the types are described and decode them by
	// the offsets the good index gives.
	idx := walkUnits(good, info, abbrev, 0, 0)
	var offs []dwarf.Offset
	for _, off := range idx.byRT {
		offs = append(offs, off)
	}
	slices.Sort(offs)
	lo, hi := int(offs[0]), int(offs[len(offs)-1])
	rng := rand.New(rand.NewPCG(3, 4))
	decoded := 0
	for range rounds(3) {
		bad := slices.Clone(info)
		for range 100 {
			bad[lo+rng.IntN(hi-lo)] = byte(rng.Uint32())
		}
		d, err := dwarf.New(abbrev, nil, nil, bad, nil, nil, nil, nil)
		if err != nil {
			continue
		}
		if err := d.AddSection(".debug_addr", addr); err != nil {
			t.Fatal(err)
		}
		walkUnits(d, bad, abbrev, 0, 0)
		x := &typeIndex{d: d, r: d.Reader(), built: map[dwarf.Offset]*Type{}, closures: map[uint64]*Type{}, byName: map[string]dwarf.Offset{}}
		for range 200 {
			if typ := x.get(offs[rng.IntN(len(offs))]); typ != nil {
				decoded++
				for off := int64(0); off < min(typ.Size, 256); off += 8 {
					typ.PointerAt(off)
				}
				typ.DirectIface()
			}
		}
	}
	if decoded == 0 {
		t.Errorf("no type decoded: the lookups were not exercised")
	}
}

func TestCorruptDescriptors(t *testing.T) {
	t.Parallel()
	b := openExe(t)
	b.forceDesc = true
	good := b.descIndex()
	if good == nil {
		t.Fatal(b.descErr)
	}
	good.mu.Lock()
	good.walk()
	addrs := slices.Clone(good.all)
	good.mu.Unlock()
	if len(addrs) < 500 {
		t.Fatalf("the walk found %d descriptors", len(addrs))
	}
	// Decode the types at the good addresses, and at others, from copies
	// of the section with bytes flipped: in the descriptors, anywhere, or
	// with every slice claiming the longest length there can be.
	rng := rand.New(rand.NewPCG(5, 6))
	decoded, failed := 0, 0
	for round := range rounds(6) {
		d := []byte(good.data)
		switch round % 3 {
		case 0:
			for range 300 {
				a := addrs[rng.IntN(len(addrs))] - good.start
				d[a+uint64(rng.IntN(abiTypeSize+32))%uint64(len(d))] = byte(rng.Uint32())
			}
		case 1:
			for range 2000 {
				d[rng.IntN(len(d))] = byte(rng.Uint32())
			}
		case 2:
			for _, a := range addrs {
				if off := a - good.start + 64; rng.IntN(2) == 0 && off+16 <= uint64(len(d)) {
					binary.LittleEndian.PutUint64(d[off:], maxArray)
					binary.LittleEndian.PutUint64(d[off+8:], maxArray)
				}
			}
		}
		x := &descIndex{b: b, start: good.start, data: string(d), swiss: good.swiss,
			built: map[uint64]*Type{}, ptrTo: map[*Type]*Type{}, basic: map[reflect.Kind]*Type{},
			maxParts: len(d)/8 + maxArray, maxNameBytes: 16*len(d) + maxNameLen}
		for i := range 300 {
			a := addrs[rng.IntN(len(addrs))]
			if i%4 == 0 {
				a = good.start + rng.Uint64N(uint64(len(d))+64)
			}
			typ := x.typeAt(a)
			if typ == nil {
				failed++
				continue
			}
			decoded++
			for off := int64(0); off < min(typ.Size, 256); off += 8 {
				typ.PointerAt(off)
			}
			typ.DirectIface()
			typ.IfacePointee()
			typ.Pointee()
		}
		x.typeByName("main.Upload")
		x.typeByName("no such type")
		if x.parts > x.maxParts || x.nameBytes > x.maxNameBytes {
			t.Errorf("round %d: kept %d parts (at most %d), %d name bytes (at most %d)", round, x.parts, x.maxParts, x.nameBytes, x.maxNameBytes)
		}
	}
	if decoded == 0 || failed == 0 {
		t.Errorf("%d types decoded, %d refused: the corrupt descriptors were not exercised", decoded, failed)
	}
}

// TestBadTypesSection gives the descriptors a module data whose types
// section is outside the file.
func TestBadTypesSection(t *testing.T) {
	t.Parallel()
	b := openExe(t)
	b.forceDesc = true
	b.syms = &symtab{byName: map[string]int{}} // as if stripped
	b.symOnce.Do(func() {})
	b.mdOnce.Do(func() { b.md, b.mdOK = b.pcln.addr, true }) // not a module data
	if err := b.LoadTypes(); err == nil || !strings.Contains(err.Error(), "types section") {
		t.Errorf("LoadTypes() = %v, want an error about the types section", err)
	}
	if typ := b.TypeAt(0x401000); typ != nil {
		t.Errorf("TypeAt = %v, want nil", typ)
	}
	if m := strings.Join(b.Missing(), "\n"); !strings.Contains(m, "no runtime type descriptors") {
		t.Errorf("Missing() = %q, want it to say there are no descriptors", m)
	}
}
