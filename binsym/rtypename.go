package binsym

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// name sets the name of the pending type p, naming the unnamed types it is
// made of first. Called with x.mu held.
func (x *descIndex) name(p *pendingType, byType map[*Type]*pendingType, depth int) string {
	t, r := p.t, p.r
	switch {
	case p.state == 2:
		return t.Name
	case p.state == 1 || depth > maxNameDepth:
		return r.str // a cycle of unnamed types (corrupt) or a deep one
	}
	p.state = 1
	defer func() { p.state = 2 }()
	if t.Name = r.str; r.named {
		// A defined type is "pkgname.T" as the runtime prints it: the
		// linker writes the escaped package path instead of the package
		// name (type arguments in brackets are already in its form). A
		// predeclared type (int, error) has no package. The compiler's
		// shape types (go.shape.int) keep their package as it is.
		if _, rest, ok := strings.Cut(r.str, "."); ok && r.pkgPath != "" && r.pkgPath != "go.shape" {
			t.Name = pathToPrefix(r.pkgPath) + "." + rest
		}
		return t.Name
	}
	nameOf := func(c *Type) string {
		if c == nil {
			return "?"
		}
		if q := byType[c]; q != nil {
			x.name(q, byType, depth+1)
		}
		if c.noalg {
			return strings.TrimPrefix(c.Name, "noalg.") // only the outer name has it
		}
		return c.Name
	}
	nameAt := func(a uint64) *Type { return x.built[a] }
	var sb strings.Builder
	switch t.Kind {
	case reflect.Pointer:
		sb.WriteString("*" + nameOf(t.Elem))
	case reflect.Slice:
		sb.WriteString("[]" + nameOf(t.Elem))
	case reflect.Array:
		sb.WriteString("[" + strconv.FormatUint(r.arrayLen, 10) + "]" + nameOf(t.Elem))
	case reflect.Map:
		sb.WriteString("map[" + nameOf(t.Key) + "]" + nameOf(t.Elem))
	case reflect.Chan:
		sb.WriteString(chanName(r.chanDir, nameOf(t.Elem)))
	case reflect.Func:
		sb.WriteString("func")
		x.signature(&sb, r, nameAt, nameOf)
	case reflect.Interface:
		if len(r.imethods) == 0 {
			sb.WriteString("interface {}")
			break
		}
		x.interfaceName(&sb, r, byType, nameAt, nameOf)
	case reflect.Struct:
		if len(r.fields) == 0 {
			sb.WriteString("struct {}")
			break
		}
		if prefix, k, v := mapInternal(t, r); prefix != "" {
			sb.WriteString(prefix + nameOf(k) + "]" + nameOf(v))
			t.noalg = true
			break
		}
		x.structName(&sb, r, nameOf)
	default:
		return t.Name
	}
	if !x.spend(sb.Len()) {
		return t.Name // the runtime's
	}
	t.Name = sb.String()
	if t.noalg || isNoalg(t) {
		t.noalg = true
		t.Name = "noalg." + t.Name
	}
	return t.Name
}

// chanName names a channel type of direction dir whose element is named
// elem.
func chanName(dir uint64, elem string) string {
	switch dir {
	case chanRecv:
		return "<-chan " + elem
	case chanSend:
		return "chan<- " + elem
	default:
		if strings.HasPrefix(elem, "<-chan ") { // an unnamed receive-only channel
			elem = "(" + elem + ")"
		}
		return "chan " + elem
	}
}

// interfaceName writes the name of the interface type r, which has
// methods, to sb: "interface { M(int) string; main.m() }". Called with
// x.mu held.
func (x *descIndex) interfaceName(sb *strings.Builder, r *rawType, byType map[*Type]*pendingType, nameAt func(uint64) *Type, nameOf func(*Type) string) {
	sb.WriteString("interface {")
	for i, m := range r.imethods {
		if sb.Len() > maxNameLen {
			break // corrupt: the name is refused
		}
		if i > 0 {
			sb.WriteByte(';')
		}
		sb.WriteString(" " + qualify(m.name, m.pkgPath))
		if mt := x.built[m.typ]; mt != nil && mt.Kind == reflect.Func {
			if q := byType[mt]; q != nil {
				x.signature(sb, q.r, nameAt, nameOf)
			} else {
				sb.WriteString(strings.TrimPrefix(mt.Name, "func"))
			}
		}
	}
	sb.WriteString(" }")
}

// structName writes the name of the struct type r, which has fields, to
// sb: "struct { main.a int \"tag\"; B *T }". Called with x.mu held.
func (x *descIndex) structName(sb *strings.Builder, r *rawType, nameOf func(*Type) string) {
	sb.WriteString("struct {")
	for i, f := range r.fields {
		if sb.Len() > maxNameLen {
			break // corrupt: the name is refused
		}
		if i > 0 {
			sb.WriteByte(';')
		}
		sb.WriteByte(' ')
		ft := x.built[f.typ]
		ftName := nameOf(ft)
		switch {
		case f.embedded && embeddedName(ft) == f.name:
		case f.embedded:
			sb.WriteString(qualify(f.name, f.pkgPath) + " = ")
		default:
			sb.WriteString(qualify(f.name, f.pkgPath) + " ")
		}
		sb.WriteString(ftName)
		if f.tag != "" {
			sb.WriteString(" " + strconv.Quote(f.tag))
		}
	}
	sb.WriteString(" }")
}

// isNoalg reports whether the unnamed struct or array type t is one of the
// compiler's internal types that the linker names with a "noalg." prefix:
// one that has no equality function although its parts have one, a
// closure's context struct { F uintptr; ... }, or a map group's slot
// struct { key K; elem V } and array of slots. Map groups are recognized
// by mapInternal. Other internal types whose parts cannot be compared
// cannot be told from user types, and have no prefix.
func isNoalg(t *Type) bool {
	if t.equal {
		return false
	}
	comparable := func(p *Type) bool { return p != nil && (p.equal || p.noalg) }
	switch t.Kind {
	case reflect.Array:
		return comparable(t.Elem)
	case reflect.Struct:
		if len(t.Fields) == 0 {
			return false
		}
		if f := t.Fields[0]; f.Name == "F" && f.Type != nil && f.Type.Kind == reflect.Uintptr {
			return true
		}
		if len(t.Fields) == 2 && t.Fields[0].Name == "key" && t.Fields[1].Name == "elem" {
			return true
		}
		for _, f := range t.Fields {
			if !comparable(f.Type) {
				return false
			}
		}
		return true
	}
	return false
}

// mapInternal recognizes the internal struct types of maps, which the
// runtime names as the linker does: a swiss map's group, "map.group[K]V"
// (struct { ctrl uint64; slots [8]struct { key K; elem V } }), and a Go
// 1.23 map's bucket, "map.bucket[K]V" (struct { topbits [8]uint8; keys
// [8]K; elems [8]V; overflow }). It returns the name up to the key and the
// key and element types (pointers where the map stores them indirectly),
// or "" for another type.
func mapInternal(t *Type, r *rawType) (prefix string, k, v *Type) {
	field := func(i int) *Type {
		if i < len(t.Fields) && t.Fields[i].Type != nil && t.Fields[i].Type.Kind == reflect.Array {
			return t.Fields[i].Type
		}
		return nil
	}
	switch {
	case strings.HasPrefix(r.str, "map.group[") && len(t.Fields) == 2:
		slots := field(1)
		if slots == nil || slots.Elem == nil || len(slots.Elem.Fields) != 2 {
			return "", nil, nil
		}
		return "map.group[", slots.Elem.Fields[0].Type, slots.Elem.Fields[1].Type
	case strings.HasPrefix(r.str, "map.bucket[") && len(t.Fields) == 4:
		keys, elems := field(1), field(2)
		if keys == nil || elems == nil {
			return "", nil, nil
		}
		return "map.bucket[", keys.Elem, elems.Elem
	}
	return "", nil, nil
}

// spend accounts for n bytes of a name about to be composed, and reports
// whether it may be: names longer than a valid section allows are corrupt.
// Called with x.mu held.
func (x *descIndex) spend(n int) bool {
	if n > maxNameLen || x.nameBytes+n > x.maxNameBytes {
		x.noteErr(fmt.Errorf("corrupt type descriptors: names longer than the types section allows"))
		return false
	}
	x.nameBytes += n
	return true
}

// signature writes a func type's parameters and results as the linker
// names them: "(int, ...string) (int, error)".
func (x *descIndex) signature(sb *strings.Builder, r *rawType, typeAt func(uint64) *Type, nameOf func(*Type) string) {
	sb.WriteByte('(')
	for i, a := range r.in {
		if sb.Len() > maxNameLen {
			break // corrupt: the name is refused
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		if s := typeAt(a); i == len(r.in)-1 && r.variadic && s != nil && s.Kind == reflect.Slice {
			sb.WriteString("..." + nameOf(s.Elem))
			continue
		}
		sb.WriteString(nameOf(typeAt(a)))
	}
	sb.WriteByte(')')
	switch len(r.out) {
	case 0:
	case 1:
		sb.WriteString(" " + nameOf(typeAt(r.out[0])))
	default:
		sb.WriteString(" (")
		for i, a := range r.out {
			if sb.Len() > maxNameLen {
				break // corrupt: the name is refused
			}
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(nameOf(typeAt(a)))
		}
		sb.WriteByte(')')
	}
}

// embeddedName returns the field name that embedding t gives: the name of
// t, or of what t points to, without its package.
func embeddedName(t *Type) string {
	if t == nil {
		return ""
	}
	if t.Kind == reflect.Pointer && t.Elem != nil && strings.HasPrefix(t.Name, "*") {
		t = t.Elem // an unnamed pointer type
	}
	name := t.Name
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i] // a generic type's arguments hold dots
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return t.Name[i+1:]
	}
	return t.Name
}

// qualify returns the name of a struct field or method as the linker
// writes it: an unexported one is qualified by its package path.
func qualify(name, pkgPath string) string {
	if name == "" || pkgPath == "" || isExported(name) {
		return name
	}
	return pathToPrefix(pkgPath) + "." + name
}

func isExported(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsUpper(r)
}

// pathToPrefix escapes a package path as the linker does in symbol names
// (cmd/internal/objabi.PathToPrefix), and so in DWARF type names: a dot in
// the last element, '%', '"', spaces and control and non-ASCII bytes.
func pathToPrefix(s string) string {
	slash := strings.LastIndexByte(s, '/')
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '.' && i > slash || c == '%' || c == '"' || c >= 0x7f {
			const hex = "0123456789abcdef"
			sb.WriteByte('%')
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&0xf])
		} else {
			sb.WriteByte(c)
		}
	}
	return sb.String()
}
