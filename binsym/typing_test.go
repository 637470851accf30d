package binsym_test

import (
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// The test program's greeting = &Upload{Name: "hi"} is a value the linker
// allocated: Statics names it after main.greeting, StaticType types it.
func TestStatics(t *testing.T) {
	t.Parallel()
	b := open(t, binsym.TestExe)
	var found *binsym.Static
	statics := b.Statics()
	for i, s := range statics {
		if i > 0 && statics[i-1].Addr > s.Addr {
			t.Errorf("statics out of order: %#x before %#x", statics[i-1].Addr, s.Addr)
		}
		if s.Global == "main.greeting" {
			found = &statics[i]
		}
		if g, ok := b.Global(s.Addr); ok {
			t.Errorf("static of %s at %#x is in the named global %s", s.Global, s.Addr, g.Name)
		}
	}
	if found == nil {
		t.Fatalf("no static of main.greeting among %d", len(statics))
	}
	st := b.StaticType(*found)
	if st == nil || st.Name != "main.Upload" || found.Size < uint64(st.Size) {
		t.Errorf("static of main.greeting: type %v, %d bytes; want main.Upload", st, found.Size)
	}
	// A stripped executable has no symbol table to name statics with.
	if n := len(open(t, binsym.TestStrippedExe).Statics()); n != 0 {
		t.Errorf("%d statics in a stripped executable", n)
	}
}

// ArgsType lays out main.wait(ctx context.Context, ch chan struct{}, n int)
// as its caller's spill space holds the arguments.
func TestArgsType(t *testing.T) {
	t.Parallel()
	b := open(t, binsym.TestExe)
	fn, ok := b.FuncByName("main.wait")
	if !ok {
		t.Fatal("no main.wait")
	}
	at := b.ArgsType(fn.Entry)
	if at == nil {
		t.Fatal("no arguments for main.wait")
	}
	want := []struct {
		name string
		off  int64
		typ  string
	}{{"ctx", 0, "context.Context"}, {"ch", 16, "chan struct {}"}, {"n", 24, "int"}}
	if len(at.Fields) != len(want) {
		t.Fatalf("arguments %+v, want %+v", at.Fields, want)
	}
	for i, w := range want {
		f := at.Fields[i]
		if f.Name != w.name || f.Offset != w.off || f.Type == nil || f.Type.Name != w.typ {
			t.Errorf("argument %d: %s at %d (%v), want %s at %d (%s)", i, f.Name, f.Offset, f.Type, w.name, w.off, w.typ)
		}
	}
	if path, ft, data := at.PointerAt(8); path != ".ctx" || ft == nil || !data {
		t.Errorf("PointerAt(8) = %q, %v, %v; want ctx's data word", path, ft, data)
	}
	if b.ArgsType(fn.Entry+1) != nil {
		t.Errorf("arguments for a PC inside main.wait")
	}
}

// ContainingType finds main.Upload from its field Ctx at offset 88 in a
// 128-byte object, and nothing when the pointer words do not fit it.
func TestContainingType(t *testing.T) {
	t.Parallel()
	b := open(t, binsym.TestExe)
	ctx := b.TypeByName("context.Context")
	up := b.TypeByName("main.Upload")
	if ctx == nil || up == nil {
		t.Fatal("no context.Context or main.Upload")
	}
	var ptrs []uint64
	for off := int64(0); off < up.Size; off += 8 {
		if _, ft, _ := up.PointerAt(off); ft != nil {
			ptrs = append(ptrs, uint64(off))
		}
	}
	if ct := b.ContainingType(ctx, 88, 128, ptrs); ct == nil || ct.Name != "main.Upload" {
		t.Errorf("ContainingType(context.Context at 88 of 128 bytes) = %v, want main.Upload", ct)
	}
	if ct := b.ContainingType(ctx, 88, 128, []uint64{8}); ct != nil && ct.Name == "main.Upload" {
		t.Errorf("main.Upload fits a pointer at 8, its Name's length")
	}
	if ct := b.ContainingType(ctx, 88, 120, ptrs); ct != nil {
		t.Errorf("a 120-byte object is not a size class, yet got %v", ct)
	}
}
