package binsym_test

import (
	"reflect"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// Align takes the largest alignment of what a type is made of, and ends on
// a type that contains itself, as a corrupt executable can describe.
func TestAlign(t *testing.T) {
	u16 := &binsym.Type{Name: "uint16", Kind: reflect.Uint16, Size: 2}
	pair := &binsym.Type{Name: "pair", Kind: reflect.Struct, Size: 4, Fields: []binsym.Field{{Name: "a", Type: u16}, {Name: "b", Offset: 2, Type: u16}}}
	self := &binsym.Type{Name: "self", Kind: reflect.Struct, Size: 8}
	self.Fields = []binsym.Field{{Name: "b", Type: &binsym.Type{Name: "bool", Kind: reflect.Bool, Size: 1}}, {Name: "self", Offset: 1, Type: self}}
	for i, tt := range []struct {
		t    *binsym.Type
		want int64
	}{
		{u16, 2},
		{binsym.ArrayOf(pair, 3), 2},
		{&binsym.Type{Name: "*pair", Kind: reflect.Pointer, Size: 8, Elem: pair}, 8},
		{self, 1},
		{nil, 1},
	} {
		if got := tt.t.Align(); got != tt.want {
			t.Errorf("case %d: Align() = %d, want %d", i, got, tt.want)
		}
	}
}

// Align ends on a corrupt struct that contains itself, and on a deep
// nesting of arrays, and finds the largest alignment in them.
func TestAlignCorruptTypes(t *testing.T) {
	self := &binsym.Type{Name: "S", Kind: reflect.Struct, Size: 8}
	small := &binsym.Type{Name: "int16", Kind: reflect.Int16, Size: 2}
	self.Fields = []binsym.Field{{Name: "a", Type: small}, {Name: "s", Offset: 2, Type: self}}
	if got := self.Align(); got != 2 {
		t.Errorf("(struct S { a int16; s S }).Align() = %d, want 2", got)
	}
	deep := &binsym.Type{Name: "int32", Kind: reflect.Int32, Size: 4}
	for range 200_000 {
		deep = &binsym.Type{Kind: reflect.Array, Size: deep.Size, Len: 1, Elem: deep}
	}
	if got := deep.Align(); got != 4 {
		t.Errorf("([1][1]...int32).Align() = %d, want 4", got)
	}
}
