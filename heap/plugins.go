package heap

import (
	"fmt"

	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/recent"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// A heap dump records the data and bss segments of the executable only:
// the globals of a plugin (a Go module loaded by plugin.Open) are not roots
// in it, so what only they hold looks dead. pluginUnknown says so when the
// dump shows other modules: the runtime's list of modules
// (runtime.modulesSlice, a pointer in bss to a []*moduledata) has more
// than one, or frames run code outside the executable (a plugin carries
// its own copy of the packages it uses, the runtime's included). outside
// and first are funcsOutside's count of those functions and name of the
// first.
func (a *Analysis) pluginUnknown(outside int, first string) (Unknown, bool) {
	if a.Binary == nil {
		return Unknown{}, false
	}
	modules := a.moduleCount()
	if modules <= 1 && outside == 0 {
		return Unknown{}, false
	}
	var why string
	switch {
	case modules > 1 && outside > 0:
		why = fmt.Sprintf("the program loaded %s besides the executable (plugins), and %s on its stacks %s outside it (the first: %s)",
			english.Plural(modules-1, "Go module"), english.Plural(outside, "function"), isAre(outside), first)
	case modules > 1:
		why = fmt.Sprintf("the program loaded %s besides the executable (plugins)", english.Plural(modules-1, "Go module"))
	default:
		why = fmt.Sprintf("%s on the program's stacks %s outside the executable (the first: %s): it loaded plugins",
			english.Plural(outside, "function"), isAre(outside), first)
	}
	return Unknown{Reason: PluginGlobals,
		Text: why + ": the globals of plugins are not roots in the dump, so what only they hold is counted as dead"}, true
}

// funcsOutside counts the functions on the stacks that the executable
// does not have, and names the first as the dump does. newAnalysis has it
// done on the other core while the dominator tree is computed (100,000
// goroutines: 600,000 frames, 2 ms).
func (a *Analysis) funcsOutside() (n int, first string) {
	bin := a.Binary
	checked := map[uint64]bool{}
	// The entries checked last: 600,000 frames of a dozen functions are
	// then not 600,000 map lookups.
	var seen recent.Cache[uint64, struct{}]
	for i := range a.d.Frames {
		f := &a.d.Frames[i]
		h := recent.Hash(f.Entry)
		if _, ok := seen.Get(h, f.Entry); f.Entry == 0 || ok {
			continue
		}
		seen.Put(h, f.Entry, struct{}{})
		if checked[f.Entry] {
			continue
		}
		checked[f.Entry] = true
		if _, ok := bin.Func(f.Entry); !ok {
			if n == 0 {
				first = fmt.Sprintf("%s at %#x", textsafe.Escape(a.d.FrameFunc(i)), f.Entry) // the dump's name
			}
			n++
		}
	}
	return n, first
}

// maxModules bounds the module count read from the dump: a process loads a
// few plugins, not millions.
const maxModules = 1 << 20

// moduleCount returns the length of the runtime's module list, or 0 when
// the dump does not say.
func (a *Analysis) moduleCount() int {
	s, ok := a.Binary.LookupSymbol("runtime.modulesSlice")
	if !ok {
		return 0
	}
	seg := a.segmentAt(s.Addr)
	ps := uint64(a.d.Params.PtrSize)
	if seg == nil || ps == 0 || s.Addr-seg.Addr+ps > seg.Size {
		return 0
	}
	p := seg.Contents.Word(int64(s.Addr - seg.Addr))
	v, ok := a.g.Find(p)
	if !ok {
		return 0
	}
	rec, err := a.g.ObjectRecord(v, int(3*ps))
	if err != nil || rec.Addr != p || rec.Size < 3*ps || uint64(len(rec.Contents)) < 2*ps {
		return 0
	}
	n := a.g.Word(rec.Contents, int64(ps))
	if n > maxModules {
		return 0
	}
	return int(n)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
