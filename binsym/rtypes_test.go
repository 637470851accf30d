package binsym_test

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// The package path of testdata/rtypes, whose types are named by it.
const rtypesPkg = "github.com/ctxleak/ctxleak/binsym/testdata/rtypes"

// rtypesNames are the names, as DWARF gives them, of the types that
// testdata/rtypes prints, by label.
var rtypesNames = map[string]string{
	"valueCtx":               "context.valueCtx",
	"*valueCtx":              "*context.valueCtx",
	"cancelCtx":              "context.cancelCtx",
	"*cancelCtx":             "*context.cancelCtx",
	"timerCtx":               "context.timerCtx",
	"*timerCtx":              "*context.timerCtx",
	"withoutCancelCtx":       "context.withoutCancelCtx",
	"backgroundCtx":          "context.backgroundCtx",
	"Context":                "context.Context",
	"any":                    "interface {}",
	"error":                  "error",
	"Upload":                 "main.Upload",
	"*Upload":                "*main.Upload",
	"[]uint8":                "[]uint8",
	"string":                 "string",
	"map[string]Context":     "map[string]context.Context",
	"map[Key][]*Thing":       "map[" + rtypesPkg + "/inner.Key][]*" + rtypesPkg + "/dot%2epkg.Thing",
	"map[[2]string]struct{}": "map[[2]string]struct {}",
	"Box[int]":               "main.Box[int]",
	"Box[Item]":              "main.Box[" + rtypesPkg + "/inner.Item]",
	"*Box[*Thing]":           "*main.Box[*" + rtypesPkg + "/dot%2epkg.Thing]",
	"Item":                   rtypesPkg + "/inner.Item",
	"Thing":                  rtypesPkg + "/dot%2epkg.Thing",
	"Iface":                  rtypesPkg + "/inner.Iface",
	"*Impl":                  "*" + rtypesPkg + "/inner.Impl",
	"Mixed":                  "main.Mixed",
	"struct":                 "struct { " + rtypesPkg + `/inner.Item; main.a int "note:\"a\""; B *` + rtypesPkg + "/dot%2epkg.Thing }",
	"struct{}":               "struct {}",
	"func":                   "func(context.Context, ...string) (int, error)",
	"func()":                 "func()",
	"func(int) func() int":   "func(int) func() int",
	"chan int":               "chan int",
	"<-chan int":             "<-chan int",
	"chan<- []byte":          "chan<- []uint8",
	"chan (<-chan int)":      "chan (<-chan int)",
	"chan chan<- int":        "chan chan<- int",
	"[3]*Item":               "[3]*" + rtypesPkg + "/inner.Item",
	"[0]int":                 "[0]int",
	"interface":              "interface { M(int) string; main.m() }",
	"unsafe.Pointer":         "unsafe.Pointer",
	"complex128":             "complex128",
	"local":                  "main.local", // DWARF's main.local·1, suffix dropped
	"IDs":                    "main.IDs",
	"Handler":                "main.Handler",
	"Counts":                 "main.Counts",
	"Events":                 "main.Events",
	"Table":                  "main.Table",
	"Ptr":                    "main.Ptr",
	"Level":                  "main.Level",
	"Any":                    "main.Any",
	"Mutex":                  "sync.Mutex",
	"Time":                   "time.Time",
}

// TestDescriptorTypes reads types from the runtime type descriptors of a
// program linked as `go test` links (-s -w: no symbols, no DWARF), at the
// addresses reflect gave at run time.
func TestDescriptorTypes(t *testing.T) {
	b := open(t, progs.rtypesStripped)
	if b.HasDWARF() || b.HasSymbols() {
		t.Fatal("the stripped program has DWARF or symbols")
	}
	f := progs.rtypesStrippedFacts
	if len(f["type"]) != len(rtypesNames) {
		t.Errorf("the program printed %d types, the test knows %d", len(f["type"]), len(rtypesNames))
	}
	for label, v := range f["type"] {
		addr, size, kind, str := num(t, v[0]), int64(num(t, v[1])), v[2], v[3]
		want, ok := rtypesNames[label]
		if !ok {
			t.Errorf("unknown type %s (%s)", label, str)
			continue
		}
		typ := b.TypeAt(addr)
		if typ == nil || typ.Name != want || typ.Size != size || typ.Kind.String() != kind {
			t.Errorf("%s: TypeAt(%#x) = %v (%v), want %s (%d bytes, %s)", label, addr, typ, typeSummary(typ), want, size, kind)
			continue
		}
		if got, ok := b.TypeAddr(typ); !ok || got != addr {
			t.Errorf("TypeAddr(%s) = %#x, %v; want %#x", want, got, ok, addr)
		}
		if got := b.TypeByName(want); got != typ {
			t.Errorf("TypeByName(%q) = %v (%p), want %p", want, got, got, typ)
		}
	}
	if err := b.LoadTypes(); err != nil {
		t.Errorf("LoadTypes: %v", err)
	}

	for _, tc := range []struct {
		label  string
		fields string
	}{
		{"Mixed", "Item@0:" + rtypesPkg + "/inner.Item embedded; Thing@32:*" + rtypesPkg + "/dot%2epkg.Thing embedded; " +
			"Context@40:context.Context embedded; Int@56:int embedded; a@64:int; B@72:string; _@88:[0]func(); " +
			"inner@88:struct { main.x float64; main.y float64 }; mu@104:sync.Mutex"},
		{"Box[Item]", "v@0:" + rtypesPkg + "/inner.Item; next@32:*main.Box[" + rtypesPkg + "/inner.Item]"},
		{"Item", "ID@0:int; tags@8:[]string"},
		{"string", "str@0:*uint8; len@8:int"},
		{"IDs", "array@0:*" + rtypesPkg + "/inner.Key; len@8:int; cap@16:int"},
	} {
		typ := b.TypeAt(num(t, f.get(t, "type", tc.label)[0]))
		if got := fieldList(typ); got != tc.fields {
			t.Errorf("%s fields:\n got %s\nwant %s", tc.label, got, tc.fields)
		}
	}
	for _, tc := range []struct{ label, key, elem, header string }{
		{"map[Key][]*Thing", rtypesPkg + "/inner.Key", "[]*" + rtypesPkg + "/dot%2epkg.Thing",
			"map<" + rtypesPkg + "/inner.Key,[]*" + rtypesPkg + "/dot%2epkg.Thing>"},
		{"Counts", "string", "int", "map<string,int>"},
		{"Events", "", "*" + rtypesPkg + "/dot%2epkg.Thing", "hchan<*" + rtypesPkg + "/dot%2epkg.Thing>"},
		{"<-chan int", "", "int", "hchan<int>"},
	} {
		typ := b.TypeAt(num(t, f.get(t, "type", tc.label)[0]))
		if typ.Key.String() != tc.key && tc.key != "" || typ.Elem.String() != tc.elem || typ.Header.String() != tc.header {
			t.Errorf("%s: key %v, elem %v, header %v; want %s, %s, %s", tc.label, typ.Key, typ.Elem, typ.Header, tc.key, tc.elem, tc.header)
		}
	}
	if typ := b.TypeAt(num(t, f.get(t, "type", "any")[0])); !typ.EmptyInterface() {
		t.Errorf("interface {}: EmptyInterface() = false")
	}
	if typ := b.TypeAt(num(t, f.get(t, "type", "Iface")[0])); typ.EmptyInterface() || typ.Size != 16 {
		t.Errorf("%s: EmptyInterface() = true or size %d", typ, typ.Size)
	}
	if typ := b.TypeAt(num(t, f.get(t, "type", "[3]*Item")[0])); typ.Len != 3 || typ.Elem.Elem.Name != rtypesPkg+"/inner.Item" {
		t.Errorf("[3]*Item: %+v", typ)
	}
}

// TestDescriptorsMatchDWARF decodes every type that DWARF describes from its
// runtime type descriptor instead, in unstripped builds, and compares: in
// testdata/rtypes and the PIE build of testdata/prog, whose descriptors
// point through relocations; with CTXLEAK_LONG set, in its default build too.
func TestDescriptorsMatchDWARF(t *testing.T) {
	exes := []string{progs.rtypes, progs.pie}
	if os.Getenv("CTXLEAK_LONG") != "" {
		exes = append(exes, progs.exe)
	}
	for _, exe := range exes {
		dw := open(t, exe)
		desc := open(t, exe)
		binsym.UseDescriptors(desc)
		addrs := binsym.DWARFTypeAddrs(dw)
		if len(addrs) < 500 {
			t.Fatalf("%s: DWARF describes only %d runtime types", exe, len(addrs))
		}
		var diffs []string
		seen := map[[2]*binsym.Type]bool{}
		for _, a := range addrs {
			want, got := dw.TypeAt(a), desc.TypeAt(a)
			if got == nil {
				diffs = append(diffs, fmt.Sprintf("no type from the descriptor at %#x (%s)", a, want))
				continue
			}
			compareTypes(want, got, want.Name, seen, &diffs)
		}
		if len(diffs) > 0 {
			t.Errorf("%s: %d types of %d differ between DWARF and the descriptors, e.g.:\n%s", exe, len(diffs), len(addrs), strings.Join(diffs[:min(len(diffs), 10)], "\n"))
		}
		if err := desc.LoadTypes(); err != nil {
			t.Errorf("%s: LoadTypes with descriptors: %v", exe, err)
		}
		m := strings.Join(desc.Missing(), "\n")
		if !strings.Contains(m, "ClosureType") {
			t.Errorf("Missing() with descriptors = %q, want it to say ClosureType is unknown", m)
		}
	}
}

// compareTypes appends to diffs how got, a type from a descriptor, differs
// from want, DWARF's.
func compareTypes(want, got *binsym.Type, path string, seen map[[2]*binsym.Type]bool, diffs *[]string) {
	if want == nil || got == nil {
		if want != got {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v, want %v", path, got, want))
		}
		return
	}
	if seen[[2]*binsym.Type{want, got}] {
		return
	}
	seen[[2]*binsym.Type{want, got}] = true
	if w, g := typeSummary(want), typeSummary(got); w != g {
		*diffs = append(*diffs, fmt.Sprintf("%s: %s, want %s", path, g, w))
		return
	}
	compareTypes(want.Elem, got.Elem, path+".Elem", seen, diffs)
	compareTypes(want.Key, got.Key, path+".Key", seen, diffs)
	if w, g := typeSummary(want.Header), typeSummary(got.Header); w != g {
		*diffs = append(*diffs, fmt.Sprintf("%s.Header: %s, want %s", path, g, w))
	}
	if len(want.Fields) != len(got.Fields) {
		*diffs = append(*diffs, fmt.Sprintf("%s: fields %s, want %s", path, fieldList(got), fieldList(want)))
		return
	}
	for i, wf := range want.Fields {
		gf := got.Fields[i]
		if wf.Name != gf.Name || wf.Offset != gf.Offset || wf.Embedded != gf.Embedded {
			*diffs = append(*diffs, fmt.Sprintf("%s: fields %s, want %s", path, fieldList(got), fieldList(want)))
			return
		}
		compareTypes(wf.Type, gf.Type, path+"."+wf.Name, seen, diffs)
	}
}

// typeSummary describes what a type is, without its parts.
func typeSummary(t *binsym.Type) string {
	if t == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%q %v size %d len %d empty %v", t.Name, t.Kind, t.Size, t.Len, t.EmptyInterface())
}

// fieldList lists a struct's fields as "name@offset:type; ...".
func fieldList(t *binsym.Type) string {
	if t == nil {
		return "<nil>"
	}
	var fs []string
	for _, f := range t.Fields {
		s := f.Name + "@" + strconv.FormatInt(f.Offset, 10) + ":" + f.Type.String()
		if f.Embedded {
			s += " embedded"
		}
		fs = append(fs, s)
	}
	return strings.Join(fs, "; ")
}

// TestStrippedPointers follows an interface from a context node of the
// stripped program: what a holder path needs from the types.
func TestStrippedPointers(t *testing.T) {
	b := open(t, progs.stripped)
	f := progs.strippedFacts
	v := f.get(t, "itab", "*context.valueCtx")
	typAddr, ok := b.ItabType(num(t, v[0]))
	if !ok {
		t.Fatal("no static itab for *context.valueCtx")
	}
	ptr := b.TypeAt(typAddr)
	if ptr == nil || ptr.Kind != reflect.Pointer || !ptr.DirectIface() {
		t.Fatalf("TypeAt(ItabType) = %v, want a pointer", ptr)
	}
	node := ptr.IfacePointee()
	if node.String() != "context.valueCtx" || node.Size != 48 {
		t.Fatalf("IfacePointee = %v, want context.valueCtx (48 bytes)", node)
	}
	for off, want := range map[int64]string{0: ".Context", 8: ".Context", 24: ".key", 40: ".val"} {
		path, ft, data := node.PointerAt(off)
		if path != want || ft == nil || ft.Kind != reflect.Interface || data != (off%16 == 8) {
			t.Errorf("valueCtx.PointerAt(%d) = %q, %v, %v; want %s", off, path, ft, data, want)
		}
	}
	if _, ft, _ := node.PointerAt(8); ft.EmptyInterface() {
		t.Errorf(".Context is an empty interface, want context.Context")
	}
	if _, ft, _ := node.PointerAt(40); !ft.EmptyInterface() {
		t.Errorf(".val is not an empty interface")
	}
}

// TestDropLocalSuffix checks the names of types defined inside functions,
// which DWARF suffixes and the descriptors do not.
func TestDropLocalSuffix(t *testing.T) {
	for in, want := range map[string]string{
		"main.local·1":                   "main.local",
		"*main.local·12":                 "*main.local",
		"map[main.k·2]main.v·3":          "map[main.k]main.v",
		"main.Box[main.local·1]":         "main.Box[main.local]",
		"struct { main.x main.local·4 }": "struct { main.x main.local }",
		"main.odd·name":                  "main.odd·name",
		"main.end·":                      "main.end·",
		"context.valueCtx":               "context.valueCtx",
		"":                               "",
	} {
		if got := binsym.DropLocalSuffix(in); got != want {
			t.Errorf("DropLocalSuffix(%q) = %q, want %q", in, got, want)
		}
	}
}
