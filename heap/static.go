package heap

import (
	"fmt"
	"sort"
	"sync"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

// staticIndex finds the values the linker allocated statically (see
// binsym.Static), which the executable's symbol table does not name, by
// address; it reads them from the executable on first use.
type staticIndex struct {
	once sync.Once
	list []binsym.Static // by address
}

// find returns the static that holds the run-time address addr.
func (x *staticIndex) find(bin *binsym.Binary, addr uint64) (binsym.Static, bool) {
	if x == nil || bin == nil {
		return binsym.Static{}, false
	}
	x.once.Do(func() { x.list = bin.Statics() })
	i := sort.Search(len(x.list), func(i int) bool { return x.list[i].Addr > addr }) - 1
	if i < 0 {
		return binsym.Static{}, false
	}
	s := x.list[i]
	if s.Size == 0 || addr-s.Addr >= s.Size {
		return binsym.Static{}, false
	}
	return s, true
}

// staticOf returns the static a global root stands for: a root named after
// the global that points to the value (see loadOptions), starting at it.
func (a *Analysis) staticOf(root *heapdump.Root) (binsym.Static, bool) {
	name := a.g.RootName(root)
	if root.Kind != heapdump.RootGlobal || name == "" {
		return binsym.Static{}, false
	}
	s, ok := a.opts.statics.find(a.Binary, root.Addr)
	if !ok || s.Addr != root.Addr || s.Global != name {
		return binsym.Static{}, false
	}
	return s, true
}

// staticDetail is the Detail of a holder that is static value s in the
// segment seg: "the main.store it points to, allocated statically in the
// data segment", or "pointed when the program started" when the global
// holds another value in the dump. A static inside a static is "the
// main.config its value's .cfg points to".
func (a *Analysis) staticDetail(s binsym.Static, seg heapdump.SegmentKind) string {
	what := "value"
	if t := a.Binary.StaticType(s); t != nil {
		what = t.Name
	}
	whose := "it"
	if s.Nested() {
		whose = "its value's " + a.Binary.StaticPath(s)
	}
	verb := "points"
	if !a.stillPoints(s) {
		verb = "pointed when the program started" // it was assigned since
	}
	return fmt.Sprintf("the %s %s %s to, allocated statically in the %s segment", what, whose, verb, seg)
}

// stillPoints reports whether the word that pointed to static s when the
// program started (its global's data word, the last of its words, or the
// field of the outer static) holds the static's address in the dump, or
// whether that cannot be read.
func (a *Analysis) stillPoints(s binsym.Static) bool {
	ps := uint64(a.d.Params.PtrSize)
	at := s.From
	if !s.Nested() {
		g, ok := a.Binary.LookupSymbol(s.Global)
		if !ok || g.Size < ps {
			return true
		}
		at = g.Addr + g.Size - ps
	}
	seg := a.segmentAt(at)
	if seg == nil || at+ps > seg.Addr+seg.Size {
		return true
	}
	return seg.Contents.Word(int64(at-seg.Addr)) == s.Addr
}
