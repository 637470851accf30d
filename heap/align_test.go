package heap

import (
	"reflect"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// alignOf ends on a corrupt struct that contains itself, and on a deep
// nesting of arrays, and finds the largest alignment in them.
func TestAlignOfCorruptTypes(t *testing.T) {
	self := &binsym.Type{Name: "S", Kind: reflect.Struct, Size: 8}
	small := &binsym.Type{Name: "int16", Kind: reflect.Int16, Size: 2}
	self.Fields = []binsym.Field{{Name: "a", Type: small}, {Name: "s", Offset: 2, Type: self}}
	if got := alignOf(self); got != 2 {
		t.Errorf("alignOf(struct S { a int16; s S }) = %d, want 2", got)
	}
	deep := &binsym.Type{Name: "int32", Kind: reflect.Int32, Size: 4}
	for range 200_000 {
		deep = &binsym.Type{Kind: reflect.Array, Size: deep.Size, Len: 1, Elem: deep}
	}
	if got := alignOf(deep); got != 4 {
		t.Errorf("alignOf([1][1]...int32) = %d, want 4", got)
	}
}
