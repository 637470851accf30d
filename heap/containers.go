package heap

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/english"
)

// Containers of the standard library whose pointers are untyped
// (unsafe.Pointer) or typed as a header the object only starts with:
//   - sync.Pool's local and victim point to an array of sync.poolLocal,
//     as many as the next word (localSize, victimSize) says;
//   - sync/atomic.Pointer[T]'s v points to a T (its field _ is a [0]*T);
//   - the hash-trie map (internal/sync.HashTrieMap, behind sync.Map since
//     Go 1.24, unique and runtime/cgo handles; unique's canonMap since Go
//     1.25) points to its nodes as node[K,V], a header that says whether
//     the node is an entry[K,V] or an indirect[K,V];
//   - sync.eface (in a pool's queue) is an empty interface made of two
//     unsafe.Pointers: val points to an object of the type typ gives.

// enclosing returns the innermost struct of t that holds the word at off
// and the name of its field there, or nil. It descends one level a step,
// at most 100 levels.
func enclosing(t *binsym.Type, off int64) (*binsym.Type, string) {
	var st *binsym.Type
	name := ""
	for depth := 0; depth < 100 && t != nil && off >= 0 && off < t.Size; depth++ {
		switch t.Kind {
		case reflect.Array:
			if t.Elem == nil || t.Elem.Size <= 0 {
				return st, name
			}
			off %= t.Elem.Size
			t = t.Elem
			continue
		case reflect.Struct:
		default:
			return st, name
		}
		var next *binsym.Type
		for i := len(t.Fields) - 1; i >= 0; i-- {
			f := t.Fields[i]
			if f.Offset <= off && f.Type != nil && f.Type.Size > 0 && off-f.Offset < f.Type.Size {
				st, name, next, off = t, f.Name, f.Type, off-f.Offset
				break
			}
		}
		if next == nil {
			return st, name
		}
		t = next
	}
	return st, name
}

// containerTarget types rec, which the pointer at c.off of c.t points
// into, when the pointer is a field of one of the containers above. It
// returns false when it is not, or when the type cannot be told.
func (t *typer) containerTarget(c container, rec *heapdump.ObjectRecord, tt target) (target, bool) {
	a := t.a
	if a.Binary == nil || c.t == nil {
		return tt, false
	}
	st, field := enclosing(c.t, c.off)
	if st == nil {
		return tt, false
	}
	ps := int64(a.d.Params.PtrSize)
	switch {
	case st.Name == "sync.Pool" && (field == "local" || field == "victim"):
		local := a.Binary.TypeByName("sync.poolLocal")
		n := int64(c.word(ps)) // localSize or victimSize
		if local == nil || local.Size <= 0 || n <= 0 || n > int64(rec.Size)/local.Size {
			return tt, false
		}
		tt.t = binsym.ArrayOf(local, n)
	case strings.HasPrefix(st.Name, "sync/atomic.Pointer[") && field == "v":
		tt.t = atomicPointee(st)
		if tt.t != nil && strings.Contains(tt.t.Name, ".node[") {
			tt.t = t.trieNode(tt.t, rec)
		}
	case strings.HasSuffix(st.Name, ".eface") && field == "val":
		tt.t = t.dynamic(c.word(-ps))
	case (strings.HasPrefix(st.Name, "hchan<") || st.Name == "runtime.hchan") && field == "buf":
		// A channel's buffer: its elements, of the type the channel's
		// elemtype word gives (the buffer of a small channel has no
		// malloc header to tell).
		buf, et := fieldNamed(st, "buf"), fieldNamed(st, "elemtype")
		if buf == nil || et == nil {
			return tt, false
		}
		elem := a.Binary.TypeAt(c.word(et.Offset - buf.Offset))
		if elem == nil || elem.Size <= 0 || uint64(elem.Size) > rec.Size {
			return tt, false
		}
		tt.t = binsym.ArrayOf(elem, int64(rec.Size)/elem.Size)
		tt.name = "[]" + elem.Name
		return tt, true
	default:
		return tt, false
	}
	if tt.t == nil {
		return tt, false
	}
	tt.name = tt.t.Name
	return tt, true
}

// atomicPointee returns T of the struct sync/atomic.Pointer[T] p, from its
// field _ [0]*T.
func atomicPointee(p *binsym.Type) *binsym.Type {
	for _, f := range p.Fields {
		if f.Name == "_" && f.Type != nil && f.Type.Kind == reflect.Array && f.Type.Elem != nil && f.Type.Elem.Kind == reflect.Pointer {
			return f.Type.Elem.Elem
		}
	}
	return nil
}

// trieNode returns the type of the hash-trie node rec, which a pointer
// typed as node (internal/sync.node[K,V]) points to: entry[K,V] when its
// isEntry is set, else indirect[K,V].
func (t *typer) trieNode(node *binsym.Type, rec *heapdump.ObjectRecord) *binsym.Type {
	off := int64(-1)
	for _, f := range node.Fields {
		if f.Name == "isEntry" {
			off = f.Offset
		}
	}
	if off < 0 || off >= int64(len(rec.Contents)) {
		return node
	}
	kind := "indirect["
	if rec.Contents[off] != 0 {
		kind = "entry["
	}
	name := strings.Replace(node.Name, "node[", kind, 1)
	if nt := t.instance(name); nt != nil && nt.Size <= int64(rec.Size) {
		return nt
	}
	return node
}

// instance returns the instance of a generic type named name ("pkg.T[A,B]"),
// or, when the binary has only its shape (Go 1.27 keeps in DWARF
// "internal/sync.entry[go.shape.interface {},go.shape.interface {}]" but no
// instance no code names), the shape's layout under name: the two differ
// in names only. Shapes are tried for arguments that are their own
// underlying type; nil if neither is found.
func (t *typer) instance(name string) *binsym.Type {
	if nt := t.a.Binary.TypeByName(name); nt != nil {
		return nt
	}
	open, end := strings.IndexByte(name, '['), len(name)-1
	if open < 0 || end <= open || name[end] != ']' {
		return nil
	}
	if st, ok := t.shapes[name]; ok {
		return st
	}
	var args []string
	depth, from := 0, open+1
	for i := open + 1; i < end; i++ {
		switch name[i] {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, "go.shape."+name[from:i])
				from = i + 1
			}
		}
	}
	args = append(args, "go.shape."+name[from:end])
	var nt *binsym.Type
	if st := t.a.Binary.TypeByName(name[:open+1] + strings.Join(args, ",") + "]"); st != nil {
		c := *st
		c.Name = name
		nt = &c
	}
	if t.shapes == nil {
		t.shapes = map[string]*binsym.Type{}
	}
	t.shapes[name] = nt
	return nt
}

// entryKey returns the key of a hash-trie entry rec of type et, written
// out when it is an integer (a runtime/cgo handle's number, a sync.Map's
// int key), else "".
func (t *typer) entryKey(et *binsym.Type, rec *heapdump.ObjectRecord) string {
	if et == nil || !strings.HasPrefix(et.Name, "internal/sync.entry[") && !strings.HasPrefix(et.Name, "unique.entry[") {
		return ""
	}
	for _, f := range et.Fields {
		if f.Name == "key" && f.Type != nil {
			ps := int64(t.a.d.Params.PtrSize)
			return t.integer(f.Type, func(d int64) (uint64, bool) {
				o := f.Offset + d
				if o < 0 || o+ps > int64(rec.Size) {
					return 0, false
				}
				return rec.Word(o), true
			})
		}
	}
	return ""
}

// integer writes out the value of type kt that word reads (word(d) is the
// word d bytes into it), if it is an integer, or an interface holding one;
// else it returns "".
func (t *typer) integer(kt *binsym.Type, word func(d int64) (uint64, bool)) string {
	a := t.a
	if kt.Kind == reflect.Interface {
		tw, ok1 := word(0)
		dw, ok2 := word(int64(a.d.Params.PtrSize))
		if !ok1 || !ok2 || a.Binary == nil {
			return ""
		}
		typeAddr := tw
		if !kt.EmptyInterface() {
			typeAddr = 0
			if ta, ok := a.d.Itabs[tw]; ok {
				typeAddr = ta
			} else if ta, ok := a.Binary.ItabType(tw); ok {
				typeAddr = ta
			}
		}
		dyn := a.Binary.TypeAt(typeAddr)
		if dyn != nil && dyn.Kind == reflect.String {
			data, ok1 := t.readWord(dw)
			n, ok2 := t.readWord(dw + uint64(a.d.Params.PtrSize))
			if !ok1 || !ok2 {
				return ""
			}
			return t.stringKey(data, n)
		}
		if dyn == nil || !isInteger(dyn) || dyn.Size > 8 {
			return ""
		}
		v, ok := t.readWord(dw)
		if !ok {
			return ""
		}
		return formatInteger(dyn, v)
	}
	if kt.Kind == reflect.String {
		data, ok1 := word(0)
		n, ok2 := word(int64(a.d.Params.PtrSize))
		if !ok1 || !ok2 {
			return ""
		}
		return t.stringKey(data, n)
	}
	if !isInteger(kt) || kt.Size > 8 {
		return ""
	}
	v, ok := word(0)
	if !ok {
		return ""
	}
	return formatInteger(kt, v)
}

// maxKeyBytes is the most bytes of a string key a path shows.
const maxKeyBytes = 64

// stringKey writes out the string of n bytes at data: quoted, its first
// maxKeyBytes bytes and "..." past them, when it is a literal in the
// executable's read-only data, which the user has anyway; else, in a heap
// object or a data segment, only its length ("a string of 9 bytes"): the
// dump's object bytes are the process's secrets and are never printed. It
// returns "" when the string is nowhere.
func (t *typer) stringKey(data, n uint64) string {
	a := t.a
	if n > 1<<40 {
		return ""
	}
	if _, ok := a.g.Find(data); ok || a.segmentAt(data) != nil {
		return "a string of " + english.Plural(int(n), "byte")
	}
	if a.Binary == nil {
		return ""
	}
	k := min(n, maxKeyBytes)
	b, ok := a.Binary.ReadData(data, int(k))
	if !ok {
		return ""
	}
	for k < n && len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1] // cut in the middle of a character
	}
	q := strconv.Quote(string(b))
	if k < n {
		q += "..."
	}
	return q
}

// readWord reads the word at addr: in a heap object, in the data or bss
// segment, or in runtime.staticuint64s, where the runtime boxes small
// integers (its element i is i).
func (t *typer) readWord(addr uint64) (uint64, bool) {
	a := t.a
	ps := uint64(a.d.Params.PtrSize)
	if v, ok := a.g.Find(addr); ok {
		rec, err := a.g.ObjectRecord(v, 0)
		if err != nil || addr+ps > rec.Addr+rec.Size {
			return 0, false
		}
		return rec.Word(int64(addr - rec.Addr)), true
	}
	if seg := a.segmentAt(addr); seg != nil && addr+ps <= seg.Addr+seg.Size {
		return seg.Contents.Word(int64(addr - seg.Addr)), true
	}
	if s, ok := a.Binary.LookupSymbol("runtime.staticuint64s"); ok && addr >= s.Addr && addr < s.Addr+s.Size && (addr-s.Addr)%8 == 0 {
		return (addr - s.Addr) / 8, true
	}
	return 0, false
}

// isInteger reports whether t is an integer kind.
func isInteger(t *binsym.Type) bool {
	switch t.Kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// formatInteger writes out v, the first t.Size bytes of a word, as an
// integer of type t.
func formatInteger(t *binsym.Type, v uint64) string {
	bits := uint(t.Size * 8)
	if bits < 64 {
		v &= 1<<bits - 1
	}
	switch t.Kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s := int64(v)
		if bits < 64 && v&(1<<(bits-1)) != 0 {
			s = int64(v) - 1<<bits
		}
		return strconv.FormatInt(s, 10)
	}
	return strconv.FormatUint(v, 10)
}

// mapKey returns the key of the map slot whose value holds the pointer at
// c.off of c.t, written out when it is an integer (or an interface
// holding one), else "". c.t is a map's group (Go 1.24 and later: slots
// of key and elem) or bucket (before: arrays keys and values), as DWARF,
// a malloc header or swissGroup describes it.
func (t *typer) mapKey(c container) string {
	ty, off := c.t, c.off
	for depth := 0; depth < 100 && ty != nil && off >= 0 && off < ty.Size; depth++ {
		switch ty.Kind {
		case reflect.Array:
			if ty.Elem == nil || ty.Elem.Size <= 0 {
				return ""
			}
			off %= ty.Elem.Size
			ty = ty.Elem
			continue
		case reflect.Struct:
		default:
			return ""
		}
		var in *binsym.Field
		for i := len(ty.Fields) - 1; i >= 0; i-- {
			f := &ty.Fields[i]
			if f.Offset <= off && f.Type != nil && f.Type.Size > 0 && off-f.Offset < f.Type.Size {
				in = f
				break
			}
		}
		if in == nil {
			return ""
		}
		if key := fieldNamed(ty, "key"); key != nil && key.Type != nil && in.Name == "elem" {
			// A slot: its key, then its elem.
			return t.keyAt(key.Type, c, key.Offset-off)
		}
		if keys := fieldNamed(ty, "keys"); keys != nil && keys.Type != nil && keys.Type.Kind == reflect.Array &&
			keys.Type.Elem != nil && keys.Type.Elem.Size > 0 && (in.Name == "values" || in.Name == "elems") &&
			in.Type.Kind == reflect.Array && in.Type.Elem != nil && in.Type.Elem.Size > 0 {
			// A bucket: the key of value i is keys[i].
			i := (off - in.Offset) / in.Type.Elem.Size
			return t.keyAt(keys.Type.Elem, c, keys.Offset+i*keys.Type.Elem.Size-off)
		}
		ty, off = in.Type, off-in.Offset
	}
	return ""
}

// keyAt writes out the integer key of type kt that starts d bytes from
// the pointer of c.
func (t *typer) keyAt(kt *binsym.Type, c container, d int64) string {
	return t.integer(kt, func(x int64) (uint64, bool) {
		at := c.off + d + x // in c.t
		if at < 0 || at+int64(t.a.d.Params.PtrSize) > c.t.Size {
			return 0, false
		}
		return c.word(d + x), true
	})
}

// fieldNamed returns the field of struct st named name, or nil.
func fieldNamed(st *binsym.Type, name string) *binsym.Field {
	for i := range st.Fields {
		if st.Fields[i].Name == name {
			return &st.Fields[i]
		}
	}
	return nil
}
