package heap

import (
	"reflect"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// alignOf takes the largest alignment of what a type is made of, and ends
// on a type that contains itself, as a corrupt executable can describe.
func TestAlignOf(t *testing.T) {
	u16 := &binsym.Type{Name: "uint16", Kind: reflect.Uint16, Size: 2}
	pair := &binsym.Type{Name: "pair", Kind: reflect.Struct, Size: 4, Fields: []binsym.Field{{Name: "a", Type: u16}, {Name: "b", Offset: 2, Type: u16}}}
	self := &binsym.Type{Name: "self", Kind: reflect.Struct, Size: 8}
	self.Fields = []binsym.Field{{Name: "b", Type: &binsym.Type{Name: "bool", Kind: reflect.Bool, Size: 1}}, {Name: "self", Offset: 1, Type: self}}
	for _, tt := range []struct {
		t    *binsym.Type
		want int64
	}{
		{u16, 2},
		{binsym.ArrayOf(pair, 3), 2},
		{&binsym.Type{Name: "*pair", Kind: reflect.Pointer, Size: 8, Elem: pair}, 8},
		{self, 1},
	} {
		if got := alignOf(tt.t); got != tt.want {
			t.Errorf("alignOf(%s) = %d, want %d", tt.t.Name, got, tt.want)
		}
	}
}
