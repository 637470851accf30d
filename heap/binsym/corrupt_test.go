package binsym

import (
	"debug/dwarf"
	"math/rand/v2"
	"slices"
	"testing"
)

// The tables of a corrupt executable give errors or unknown answers, never
// a panic. The seed is the test program TestMain built.

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
	for i := range 120 {
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
	good, info, err := b.dwarf()
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
	idx := walkUnits(good, 0, 0)
	var offs []dwarf.Offset
	for _, off := range idx.byRT {
		offs = append(offs, off)
	}
	slices.Sort(offs)
	lo, hi := int(offs[0]), int(offs[len(offs)-1])
	rng := rand.New(rand.NewPCG(3, 4))
	decoded := 0
	for range 8 {
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
		walkUnits(d, 0, 0)
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
