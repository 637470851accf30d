package binsym

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// A Static is a value the linker allocated in a writable data section
// without a symbol of its own: `var x = &T{...}` at package level puts the T
// there (net/http.DefaultTransport's Transport is one). It is named by the
// global whose initial value points to it.
type Static struct {
	// Global is the global variable that points to the value, e.g.
	// "main.defaultTransport": a pointer, or an interface whose data word
	// points to it.
	Global string
	// Addr is the value's run-time start.
	Addr uint64
	// Size bounds the value's size: the distance to the next symbol or
	// static, 0 when none follows it in its section. StaticType gives
	// the exact size.
	Size uint64
	// From is the run-time address of the word that points to the value
	// when the program starts: Global's data word, or a word of the outer
	// static for a static inside a static (`var x = &T{u: &U{...}}` puts
	// both T and U there; see Nested and StaticPath).
	From uint64

	outer *Static // the static whose word at off points to this one
	off   int64
}

// Nested reports whether s is a static inside another static, which
// Global's value leads to rather than points to.
func (s Static) Nested() bool { return s.outer != nil }

// maxNestedStatics bounds the statics found inside statics, and
// maxStaticDepth how deep they nest.
const (
	maxNestedStatics = 1 << 12
	maxStaticDepth   = 4
	maxStaticScan    = 4 << 10 // the bytes of a static nestedStatics reads
)

// Statics returns the values the linker allocated statically that a
// global variable of the executable points to (see Static), by address.
// It reads the initial values of the globals of one or two words from the
// file (an interface's first word must be an itab or a type descriptor)
// and needs the symbol table, not DWARF. Each call reads the file anew:
// keep the result.
func (b *Binary) Statics() []Static {
	t, err := b.symbols()
	if err != nil || len(t.global) == 0 {
		return nil
	}
	var out []Static
	for _, g := range t.global {
		if g.size != 8 && g.size != 16 {
			continue
		}
		// An interface's data word is its second word.
		v := b.linkWord(g.addr + g.size - 8)
		if v == 0 || v == g.addr {
			continue
		}
		if _, named := containing(t.global, v); named {
			continue // a pointer to a named global
		}
		if !b.writable(v) {
			continue // read-only data: a func value, a string...
		}
		if g.size == 16 && !b.namesType(t, b.linkWord(g.addr)) {
			continue
		}
		out = append(out, Static{Global: g.name, Addr: b.toRun(v), From: b.toRun(g.addr + g.size - 8)})
	}
	b.sizeStatics(t, out)
	if nested := b.nestedStatics(t, out); len(nested) > 0 {
		out = append(out, nested...)
		b.sizeStatics(t, out)
	}
	return out
}

// sizeStatics sorts statics by address and sets their Size bounds.
func (b *Binary) sizeStatics(t *symtab, out []Static) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Addr != out[j].Addr {
			return out[i].Addr < out[j].Addr
		}
		return out[i].Global < out[j].Global
	})
	for i := range out {
		s := &out[i]
		link := b.toLink(s.Addr)
		k := sort.Search(len(t.global), func(k int) bool { return t.global[k].addr > link })
		if k < len(t.global) {
			s.Size = t.global[k].addr - link
		}
		if i+1 < len(out) && out[i+1].Addr > s.Addr && (s.Size == 0 || out[i+1].Addr-s.Addr < s.Size) {
			s.Size = out[i+1].Addr - s.Addr
		}
	}
}

// nestedStatics returns the statics that the words of statics point to
// (`var x = &T{u: &U{}}`: U is in the data segment too), and those inside
// them, up to maxStaticDepth deep: each word of a static's bound that
// points to writable memory no symbol names, as Statics does for globals.
// It reads no DWARF (StaticType and StaticPath type them when asked).
func (b *Binary) nestedStatics(t *symtab, top []Static) []Static {
	seen := make(map[uint64]bool, len(top))
	for _, s := range top {
		seen[b.toLink(s.Addr)] = true
	}
	queue := make([]*Static, 0, len(top))
	for i := range top {
		queue = append(queue, &top[i])
	}
	var out []Static
	for depth := 0; depth < maxStaticDepth && len(queue) > 0; depth++ {
		var next []*Static
		for _, o := range queue {
			link := b.toLink(o.Addr)
			scan := min(o.Size, maxStaticScan) &^ 7
			// One read for the static's words, not a system call each;
			// word by word where the static lies past its section.
			words, whole := b.readLink(link, int(scan))
			for off := uint64(0); off < scan; off += 8 {
				if len(out) >= maxNestedStatics {
					return out
				}
				var v uint64
				if whole {
					v = b.linkValue(link+off, binary.LittleEndian.Uint64(words[off:]))
				} else {
					v = b.linkWord(link + off)
				}
				if v == 0 || seen[v] || !b.writable(v) {
					continue
				}
				if _, named := containing(t.global, v); named {
					continue
				}
				seen[v] = true
				outer := *o
				ns := Static{Global: o.Global, Addr: b.toRun(v), From: b.toRun(link + off), outer: &outer, off: int64(off)}
				// Bounded by the next symbol until sizeStatics sees all.
				if k := sort.Search(len(t.global), func(k int) bool { return t.global[k].addr > v }); k < len(t.global) {
					ns.Size = t.global[k].addr - v
				}
				out = append(out, ns)
				next = append(next, &ns)
			}
		}
		queue = next
	}
	return out
}

// StaticPath returns the fields that lead from the value Global points to
// to static s: "" for that value itself, ".cfg" for a static its field cfg
// points to, "+16" where the outer value's type is unknown.
func (b *Binary) StaticPath(s Static) string {
	if s.outer == nil {
		return ""
	}
	prefix := b.StaticPath(*s.outer)
	if ot := b.StaticType(*s.outer); ot != nil {
		if path, ft, _ := ot.PointerAt(s.off); ft != nil && path != "" {
			return prefix + path
		}
	}
	return fmt.Sprintf("%s+%d", prefix, s.off)
}

// StaticType returns the type of static s: the element type of its
// global's pointer type, or the dynamic type of its global's interface
// value. It returns nil when the executable does not say (no DWARF for a
// pointer), or when the type is larger than s can be.
func (b *Binary) StaticType(s Static) *Type {
	t, err := b.symbols()
	if err != nil {
		return nil
	}
	i, ok := t.byName[s.Global]
	if !ok {
		return nil
	}
	g := t.all[i]
	var st *Type
	if s.outer != nil {
		// The element type of the outer value's pointer field.
		ot := b.StaticType(*s.outer)
		if ot == nil {
			return nil
		}
		if _, ft, _ := ot.PointerAt(s.off); ft != nil && ft.Kind == reflect.Pointer {
			st = ft.Elem
		}
		if st == nil || st.Size <= 0 || (s.Size > 0 && uint64(st.Size) > s.Size) {
			return nil
		}
		return st
	}
	switch gt := b.GlobalType(g.name); {
	case gt != nil && gt.Kind == reflect.Pointer:
		st = gt.Elem
	case (gt == nil || gt.Kind == reflect.Interface) && g.size == 16:
		w := b.linkWord(g.addr) // the itab or type word
		typeAddr := b.toRun(w)
		if ta, ok := b.ItabType(typeAddr); ok {
			typeAddr = ta
		}
		if dyn := b.TypeAt(typeAddr); dyn != nil && dyn.DirectIface() {
			st = dyn.IfacePointee()
		}
	}
	if st == nil || st.Size <= 0 || (s.Size > 0 && uint64(st.Size) > s.Size) {
		return nil
	}
	return st
}

// namesType reports whether the link address w is a static itab or a type
// descriptor.
func (b *Binary) namesType(t *symtab, w uint64) bool {
	if w == 0 {
		return false
	}
	if _, ok := b.ItabType(b.toRun(w)); ok {
		return true
	}
	// Type descriptors lie in one symbol, "type:*", or in their own.
	s, ok := containing(t.all, w)
	return ok && (s.name == "type:*" || s.addr == w && strings.HasPrefix(s.name, "type:") && !strings.HasPrefix(s.name, "type:."))
}

// writable reports whether link address a is in a writable, allocated,
// non-executable section: where the linker puts static values.
func (b *Binary) writable(a uint64) bool {
	for _, s := range b.elf.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Addr <= a && a-s.Addr < s.Size {
			return s.Flags&elf.SHF_WRITE != 0 && s.Flags&elf.SHF_EXECINSTR == 0
		}
	}
	return false
}

// ReadData reads n bytes at the run-time address addr from the file:
// read-only data such as the bytes of a string literal. It fails for an
// address in no section, in a section with no file contents (bss), and for
// n past the section's end.
func (b *Binary) ReadData(addr uint64, n int) ([]byte, bool) {
	if n < 0 || n > 1<<20 {
		return nil, false
	}
	return b.readLink(b.toLink(addr), n)
}
