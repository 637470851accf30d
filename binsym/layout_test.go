package binsym

import (
	"runtime"
	"testing"
)

// TestLayout127 walks the typelink descriptors and static itabs of the
// test program built by this toolchain, on Go 1.27 and later, where they
// replaced the module's typelinks and itablinks: every descriptor's size
// must add up to the end of their region, and every itab must name a type.
func TestLayout127(t *testing.T) {
	b, err := Open(TestStrippedExe)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	types, end, _, _, ok := b.typesRegions()
	if minor, known := b.goMinor(); known && minor < 27 {
		if ok {
			t.Fatalf("%s: typesRegions found Go 1.27's layout", b.GoVersion())
		}
		t.Skipf("%s has typelinks and itablinks (Go 1.27 replaced them)", runtime.Version())
	}
	if !ok {
		t.Fatalf("%s: no typelink descriptors and itabs in the module data", b.GoVersion())
	}
	x := b.descIndex()
	if x == nil {
		t.Fatal(b.descErr)
	}
	descs, complete := x.typelinks127(types, end)
	if !complete || len(descs) < 100 {
		t.Errorf("%d typelink descriptors, ending at the region's end %v", len(descs), complete)
	}
	for _, a := range descs {
		if typ := b.TypeAt(b.toRun(a)); typ == nil {
			t.Errorf("no type at typelink descriptor %#x", a)
		}
	}
	itabs := b.itabLinks()
	if len(itabs) < 5 {
		t.Errorf("%d static itabs", len(itabs))
	}
	for a := range itabs {
		if typ, ok := b.ItabType(b.toRun(a)); !ok || b.TypeAt(typ) == nil {
			t.Errorf("static itab %#x: ItabType %#x, %v", a, typ, ok)
		}
	}
}
