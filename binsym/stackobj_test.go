package binsym_test

import (
	"slices"
	"testing"
)

// main.addrTaken's local v (a main.pinned of 32 bytes, pointers at 0 and
// 24: an interface's type word is not one) is a stack object: the record gives its place and pointers,
// DWARF its name and type; a stripped executable gives the record only.
func TestStackObjects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		exe   string
		named bool
	}{{progs.exe, true}, {progs.stripped, false}} {
		b := open(t, tt.exe)
		fn := mustFunc(t, b, "main.addrTaken")
		objs, err := b.StackObjects(fn.Entry)
		if err != nil {
			t.Fatalf("%s: %v", tt.exe, err)
		}
		if len(objs) != 1 {
			t.Fatalf("%s: %d stack objects %+v, want 1", tt.exe, len(objs), objs)
		}
		o := objs[0]
		ptrs := slices.Collect(o.Pointers())
		if o.Off >= 0 || o.Size != 32 || o.PtrBytes != 32 || !slices.Equal(ptrs, []int64{0, 24}) {
			t.Errorf("%s: object at %d, %d bytes, %d of pointers at %v: want a local of 32 bytes, pointers at 0 and 24", tt.exe, o.Off, o.Size, o.PtrBytes, ptrs)
		}
		// Any frame holding a 32-byte local is larger than the saved
		// frame pointer and return address.
		v, ok := b.StackObjectVar(fn.Entry, &o, 64)
		switch {
		case ok != tt.named:
			t.Errorf("%s: named %v (%+v), want %v", tt.exe, ok, v, tt.named)
		case ok && (v.Name != "v" || v.Type == nil || v.Type.Name != "main.pinned"):
			t.Errorf("%s: variable %q of type %v, want v of main.pinned", tt.exe, v.Name, v.Type)
		}
		// The wrong place names nothing.
		moved := o
		moved.Off -= 8
		if v, ok := b.StackObjectVar(fn.Entry, &moved, 64); ok {
			t.Errorf("%s: a stack object 8 bytes lower is named %q", tt.exe, v.Name)
		}
	}
	b := open(t, progs.exe)
	// A function without stack objects, and a PC in no function.
	if objs, err := b.StackObjects(mustFunc(t, b, "main.count").Entry); len(objs) != 0 || err != nil {
		t.Errorf("main.count: %+v, %v; want no stack objects", objs, err)
	}
	if objs, err := b.StackObjects(1); len(objs) != 0 || err != nil {
		t.Errorf("PC 1: %+v, %v; want nothing", objs, err)
	}
}
