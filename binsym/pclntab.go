package binsym

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// The pclntab layout is that of Go 1.20 and later (runtime/symtab.go,
// internal/abi/symtab.go): a header, then the function name table, the
// compilation unit table, the file table, the pc-value tables and the
// function table, whose entries point at _func records.

const (
	go120Magic = 0xfffffff1

	argsSizeUnknown = -0x80000000 // abi.ArgsSizeUnknown

	pcdataInlTreeIndex = 2 // abi.PCDATA_InlTreeIndex
	funcdataInlTree    = 3 // abi.FUNCDATA_InlTree

	funcFixedSize    = 44 // size of _func before its pcdata and funcdata arrays
	inlinedCallSize  = 16 // size of runtime.inlinedCall
	maxInlineFrames  = 1000
	pclntabHeaderLen = 8 + 8*8
)

// pclntab is a parsed .gopclntab section. Nothing is decoded up front beyond
// the header: lookups read the tables in place.
type pclntab struct {
	data      []byte
	addr      uint64 // link address of the table
	minLC     uint64
	nfunc     int
	text      uint64 // link address of runtime.text
	funcnames []byte
	cutab     []byte
	filetab   []byte
	pctab     []byte
	functab   []byte // functab followed by the _func records
	gofunc    uint64 // link address of go:func.*, or 0
	hasGofunc bool
	b         *Binary

	lookups  atomic.Int64 // calls of entryByName
	nameOnce sync.Once
	byName   map[string]uint64 // function name -> link entry, built on first use
}

func (b *Binary) newPclntab(data []byte, addr uint64) (*pclntab, error) {
	if len(data) < pclntabHeaderLen {
		return nil, fmt.Errorf("%d bytes is too short for a header", len(data))
	}
	le := binary.LittleEndian
	magic := le.Uint32(data)
	if magic != go120Magic {
		return nil, fmt.Errorf("unsupported pclntab magic %#x (need Go 1.20 or later, %#x)", magic, uint32(go120Magic))
	}
	if data[4] != 0 || data[5] != 0 || data[7] != 8 {
		return nil, fmt.Errorf("bad header: pad %d %d, pointer size %d", data[4], data[5], data[7])
	}
	t := &pclntab{data: data, addr: addr, minLC: uint64(data[6]), b: b}
	if t.minLC == 0 {
		return nil, errors.New("bad header: zero instruction size quantum")
	}
	word := func(i int) uint64 { return le.Uint64(data[8+8*i:]) }
	nfunc := word(0)
	if nfunc > uint64(len(data))/8 {
		return nil, fmt.Errorf("bad header: %d functions in %d bytes", nfunc, len(data))
	}
	t.nfunc = int(nfunc)
	var err error
	slice := func(i int) []byte {
		off := word(i)
		if off > uint64(len(data)) {
			err = fmt.Errorf("bad header: table offset %#x past the end (%#x)", off, len(data))
			return nil
		}
		return data[off:]
	}
	t.funcnames = slice(3)
	t.cutab = slice(4)
	t.filetab = slice(5)
	t.pctab = slice(6)
	t.functab = slice(7)
	if err != nil {
		return nil, err
	}
	if uint64(len(t.functab)) < (nfunc+1)*8 {
		return nil, fmt.Errorf("function table of %d entries does not fit", nfunc)
	}
	// The text start is no longer in the header: take runtime.text, or
	// find it from the module data. The start of .text is the same only in
	// an internally linked executable: an external linker puts C code first.
	if s, ok := b.linkSymbol("runtime.text"); ok {
		t.text = s
	} else if text, ok := b.moduledataText(t); ok {
		t.text = text
	} else if sec := b.elf.Section(".text"); sec != nil && b.elf.Section(".interp") == nil && !b.pie {
		t.text = sec.Addr
	} else {
		return nil, errors.New("cannot find the start of the Go text: no runtime.text symbol and no module data")
	}
	if s, ok := b.linkSymbol("go:func.*"); ok {
		t.gofunc, t.hasGofunc = s, true
	}
	return t, nil
}

// Words of runtime.moduledata (runtime/symtab.go), the same from Go 1.20
// to 1.27: what comes before them has not changed. mdLayout gives the
// later words.
const (
	mdFuncnametab = 1  // funcnametab slice: pointer, length, capacity
	mdMinPC       = 20 // minpc: the first function's entry
)

// moduledataText finds the module data of a stripped executable and
// returns the text start from it: its minpc minus the first function's
// offset in the function table.
func (b *Binary) moduledataText(t *pclntab) (uint64, bool) {
	m, ok := b.findModuledata(t)
	if !ok {
		return 0, false
	}
	entry0 := uint64(binary.LittleEndian.Uint32(t.functab))
	text := b.moduledataWord(m, mdMinPC) - entry0
	s := b.sectionAt(text)
	return text, s != nil && s.Flags&elf.SHF_EXECINSTR != 0
}

// findModuledata returns the link address of runtime.firstmoduledata: the
// symbol, or in a stripped executable the word in writable data that
// points to the pclntab t and is followed by the funcnametab slice.
func (b *Binary) findModuledata(t *pclntab) (uint64, bool) {
	if t == nil {
		return 0, false
	}
	if m, ok := b.linkSymbol("runtime.firstmoduledata"); ok {
		return m, true
	}
	le := binary.LittleEndian
	funcnames := t.addr + le.Uint64(t.data[8+8*3:])
	isModuledata := func(m uint64) bool { return b.moduledataWord(m, mdFuncnametab) == funcnames }
	if b.pie {
		// The pointer is filled in by a relocation.
		var cands []uint64
		for off, add := range b.relatives() {
			if add == t.addr && isModuledata(off) {
				cands = append(cands, off)
			}
		}
		if len(cands) == 0 {
			return 0, false
		}
		return slices.Min(cands), true
	}
	for _, s := range b.elf.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_WRITE == 0 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for i := 0; i+8 <= len(data); i += 8 {
			if le.Uint64(data[i:]) == t.addr && isModuledata(s.Addr+uint64(i)) {
				return s.Addr + uint64(i), true
			}
		}
	}
	return 0, false
}

// moduledataAddr returns the link address of the module data, found once.
func (b *Binary) moduledataAddr() (uint64, bool) {
	b.mdOnce.Do(func() { b.md, b.mdOK = b.findModuledata(b.pcln) })
	return b.md, b.mdOK
}

// A linkTable is one of the module's tables of links: its link address and
// number of entries.
type linkTable struct{ addr, n uint64 }

// moduleTables returns the module's typelinks (int32 offsets of the
// unnamed types' descriptors from the types section) and itablinks
// (pointers to the static itabs). They are read from the module data,
// where they follow the textsectmap slice, which follows epclntab where
// the module data has it; or, without module data, from the sections the
// Go linker makes (an external linker merges them into others). Go 1.27
// has neither: typesRegions gives what replaced them.
func (b *Binary) moduleTables() (typelinks, itablinks linkTable) {
	if m, ok := b.moduledataAddr(); ok {
		l := b.mdLayout(m)
		if l.typedesclen != 0 {
			return linkTable{}, linkTable{}
		}
		i := l.epclntab
		if end := b.pcln.addr + uint64(len(b.pcln.data)); b.moduledataWord(m, i) == end {
			i++
		}
		t, ok1 := b.moduledataSlice(m, i+3, 4)
		it, ok2 := b.moduledataSlice(m, i+6, 8)
		if ok1 && ok2 {
			return t, it
		}
	}
	section := func(size uint64, names ...string) linkTable {
		for _, name := range names {
			if s := b.elf.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
				return linkTable{s.Addr, s.Size / size}
			}
		}
		return linkTable{}
	}
	return section(4, ".typelink", ".data.rel.ro.typelink"), section(8, ".itablink", ".data.rel.ro.itablink")
}

// moduledataSlice returns the slice whose header is at word i of the module
// data m, with elements of size bytes. It fails unless the length equals
// the capacity and the elements are in one section.
func (b *Binary) moduledataSlice(m uint64, i int, size uint64) (linkTable, bool) {
	p, n, c := b.moduledataWord(m, i), b.moduledataWord(m, i+1), b.moduledataWord(m, i+2)
	if n == 0 && c == 0 {
		return linkTable{}, true
	}
	s := b.sectionAt(p)
	if n != c || s == nil || s.Type == elf.SHT_NOBITS || n > (s.Size-(p-s.Addr))/size {
		return linkTable{}, false
	}
	return linkTable{p, n}, true
}

// moduledataWord returns the word i of the module data at link address m,
// or 0.
func (b *Binary) moduledataWord(m uint64, i int) uint64 {
	return b.linkWord(m + 8*uint64(i))
}

// funcInfo is one _func record.
type funcInfo struct {
	t     *pclntab
	entry uint64 // link address
	rec   []byte // the record, from its start to the end of the table
	index int    // in the function table
}

// end returns the link address where f's code ends: the next function's
// entry, or the end of the text.
func (f funcInfo) end() uint64 {
	return f.t.text + uint64(binary.LittleEndian.Uint32(f.t.functab[8*(f.index+1):]))
}

func (f funcInfo) field(i int) uint32 { return binary.LittleEndian.Uint32(f.rec[4*i:]) }
func (f funcInfo) nameOff() int32     { return int32(f.field(1)) }
func (f funcInfo) args() int32        { return int32(f.field(2)) }
func (f funcInfo) pcfile() uint32     { return f.field(5) }
func (f funcInfo) pcln() uint32       { return f.field(6) }
func (f funcInfo) npcdata() uint32    { return f.field(7) }
func (f funcInfo) cuOffset() uint32   { return f.field(8) }
func (f funcInfo) nfuncdata() uint8   { return f.rec[funcFixedSize-1] }

func (f funcInfo) name() string { return f.t.funcName(f.nameOff()) }

// pcdata returns the offset of the pcdata table i, or 0 for none.
func (f funcInfo) pcdata(i uint32) uint32 {
	if i >= f.npcdata() {
		return 0
	}
	off := funcFixedSize + 4*uint64(i) // in uint64: no overflow where int has 32 bits
	if off+4 > uint64(len(f.rec)) {
		return 0
	}
	return binary.LittleEndian.Uint32(f.rec[off:])
}

// funcdata returns the offset from go:func.* of the funcdata i.
func (f funcInfo) funcdata(i uint8) (uint32, bool) {
	if i >= f.nfuncdata() {
		return 0, false
	}
	off := funcFixedSize + 4*uint64(f.npcdata()) + 4*uint64(i)
	if off+4 > uint64(len(f.rec)) {
		return 0, false
	}
	v := binary.LittleEndian.Uint32(f.rec[off:])
	return v, v != ^uint32(0)
}

// findFunc returns the function whose code holds the link address pc.
func (t *pclntab) findFunc(pc uint64) (funcInfo, bool) {
	if t == nil || pc < t.text {
		return funcInfo{}, false
	}
	le := binary.LittleEndian
	off := pc - t.text
	if off >= 1<<32 {
		return funcInfo{}, false
	}
	// functab[i] = {entryoff, funcoff}; entry nfunc is the end of the text.
	i := sort.Search(t.nfunc+1, func(i int) bool {
		return uint64(le.Uint32(t.functab[8*i:])) > off
	}) - 1
	if i < 0 || i >= t.nfunc {
		return funcInfo{}, false
	}
	return t.funcAt(i)
}

func (t *pclntab) funcAt(i int) (funcInfo, bool) {
	le := binary.LittleEndian
	entryOff := le.Uint32(t.functab[8*i:])
	funcOff := uint64(le.Uint32(t.functab[8*i+4:]))
	if funcOff+funcFixedSize > uint64(len(t.functab)) {
		return funcInfo{}, false
	}
	f := funcInfo{t: t, entry: t.text + uint64(entryOff), rec: t.functab[funcOff:], index: i}
	if f.field(0) != entryOff {
		return funcInfo{}, false
	}
	return f, true
}

// entryByName returns the link address of the function named name, the
// first of functions that share it. The first scanLookups calls scan the
// table, which costs less than indexing it for the lookup or two most
// uses make (a tenth of it, without allocating); the next ones index
// every function by name, once, and look it up there, so that many
// lookups stay linear in the table.
func (t *pclntab) entryByName(name string) (uint64, bool) {
	if t == nil {
		return 0, false
	}
	if t.lookups.Add(1) <= scanLookups {
		for i := 0; i < t.nfunc; i++ {
			if f, ok := t.funcAt(i); ok && t.funcNameIs(f.nameOff(), name) {
				return f.entry, true
			}
		}
		return 0, false
	}
	t.nameOnce.Do(t.indexNames)
	e, ok := t.byName[name]
	return e, ok
}

// scanLookups is the number of lookups by name entryByName answers by
// scanning the table, before it indexes it.
const scanLookups = 8

// indexNames maps the name of every function to its entry, keeping the
// first of functions that share a name.
func (t *pclntab) indexNames() {
	t.byName = make(map[string]uint64, min(t.nfunc, 1<<16))
	for i := 0; i < t.nfunc; i++ {
		f, ok := t.funcAt(i)
		if !ok {
			continue
		}
		name, ok := t.cstring(t.funcnames, int64(f.nameOff()))
		if _, dup := t.byName[name]; ok && !dup {
			t.byName[name] = f.entry
		}
	}
}

func (t *pclntab) cstring(tab []byte, off int64) (string, bool) {
	if off < 0 || off >= int64(len(tab)) {
		return "", false
	}
	s := tab[off:]
	n := 0
	for n < len(s) && s[n] != 0 {
		n++
	}
	return string(s[:n]), true
}

func (t *pclntab) funcName(off int32) string {
	s, ok := t.cstring(t.funcnames, int64(off))
	if !ok {
		return "?"
	}
	return s
}

func (t *pclntab) funcNameIs(off int32, name string) bool {
	if off < 0 || int(off)+len(name) >= len(t.funcnames) {
		return false
	}
	s := t.funcnames[off:]
	return string(s[:len(name)]) == name && s[len(name)] == 0
}

// pcvalue returns the value of the pc-value table at offset off for the
// link address pc in f, or -1.
func (t *pclntab) pcvalue(f funcInfo, off uint32, pc uint64) int32 {
	if off == 0 || uint64(off) >= uint64(len(t.pctab)) {
		return -1
	}
	p := t.pctab[off:]
	val := int32(-1)
	cur := f.entry
	for first := true; ; first = false {
		uv, n := binary.Uvarint(p)
		if n <= 0 || (uv == 0 && !first) {
			return -1
		}
		p = p[n:]
		val += int32(-(uv & 1) ^ (uv >> 1))
		pcd, n := binary.Uvarint(p)
		if n <= 0 {
			return -1
		}
		p = p[n:]
		cur += pcd * t.minLC
		if pc < cur {
			return val
		}
	}
}

// fileLine returns the source position of the link address pc in f.
func (t *pclntab) fileLine(f funcInfo, pc uint64) (string, int) {
	line := t.pcvalue(f, f.pcln(), pc)
	fileno := t.pcvalue(f, f.pcfile(), pc)
	if line < 0 || fileno < 0 {
		return "?", 0
	}
	i := uint64(f.cuOffset()) + uint64(fileno)
	if 4*i+4 > uint64(len(t.cutab)) {
		return "?", 0
	}
	off := binary.LittleEndian.Uint32(t.cutab[4*i:])
	file, ok := t.cstring(t.filetab, int64(off))
	if off == ^uint32(0) || !ok {
		return "?", 0
	}
	return file, int(line)
}

// A Func is a function and a source position in it.
type Func struct {
	// Name is the function's name as the runtime prints it, e.g.
	// "main.(*thumbnailer).loop" or "main.scheduleRetry.func1". For a PC
	// in code that was inlined, it is the physical (outermost) function,
	// the one a heap dump's stack frame names; Frames lists the inlined
	// calls.
	Name string
	// Entry is the function's entry PC.
	Entry uint64
	// PC is the PC whose source position File and Line give: the PC looked
	// up by Func, one less than the return PC for CallSite.
	PC uint64
	// File and Line are the source position of PC: of the innermost
	// inlined function when PC is in inlined code, like a Go traceback.
	File string
	Line int
}

// Func returns the function whose code holds pc and the source position of
// the instruction at pc. Use it for the code pointer of a func value (a
// closure's first word), a function entry, or a PC that is not a return
// address. For return addresses, such as a goroutine's creation PC (gopc) or
// the PC of a stack frame that called another one, use CallSite.
func (b *Binary) Func(pc uint64) (Func, bool) {
	f, ok := b.pcln.findFunc(b.toLink(pc))
	if !ok {
		return Func{}, false
	}
	file, line := b.pcln.fileLine(f, b.toLink(pc))
	return Func{Name: f.name(), Entry: b.toRun(f.entry), PC: pc, File: file, Line: line}, true
}

// CallSite returns the function holding the return address pc and the
// source position of the call that returns there, as a Go traceback prints
// it: the position of pc-1 unless pc is the function's entry (the first
// frame of a goroutine that has not started running). The PCs of a heap
// dump's stack frames and a goroutine's gopc are return addresses.
func (b *Binary) CallSite(pc uint64) (Func, bool) {
	f, ok := b.pcln.findFunc(b.toLink(pc))
	if !ok {
		return Func{}, false
	}
	if b.toLink(pc) > f.entry {
		pc--
	}
	file, line := b.pcln.fileLine(f, b.toLink(pc))
	return Func{Name: f.name(), Entry: b.toRun(f.entry), PC: pc, File: file, Line: line}, true
}

// FuncByName returns the entry of the function named name; File and Line are
// the position of its entry. The first few lookups by name scan the
// functions; the next ones index them by name, once (a few milliseconds
// for a large executable).
func (b *Binary) FuncByName(name string) (Func, bool) {
	entry, ok := b.pcln.entryByName(name)
	if !ok {
		return Func{}, false
	}
	return b.Func(b.toRun(entry))
}

// ArgsSize returns the size in bytes of the argument frame of the function
// whose code holds pc (normally its entry): the pclntab's args, which for a
// register-ABI function covers the spill slots of its register arguments
// and any arguments and results passed on the stack (results returned in
// registers take none). The caller reserves this space at
// MinFrameSize in its own frame, which is why a heap dump shows a callee's
// live arguments in its caller's frame. It returns false for an unknown PC
// and for the few functions whose size is only known at run time
// (reflect's call stubs).
func (b *Binary) ArgsSize(pc uint64) (int64, bool) {
	f, ok := b.pcln.findFunc(b.toLink(pc))
	if !ok || f.args() == argsSizeUnknown || f.args() < 0 {
		return 0, false
	}
	return int64(f.args()), true
}

// A Frame is one logical call in the code at a PC, after inlining is undone:
// where it is, and whether it was inlined into its caller.
type Frame struct {
	Position
	Inlined bool // the call was inlined into its caller
}

// Frames returns the logical calls at pc, innermost first, the way
// runtime.CallersFrames expands inlining: the last frame is always the
// physical function. pc is looked up as given: for a return address, pass
// CallSite(pc).PC. It returns nil for an unknown pc; without a go:func.*
// symbol (a stripped executable) it returns only the physical function.
func (b *Binary) Frames(pc uint64) []Frame {
	t := b.pcln
	lpc := b.toLink(pc)
	f, ok := t.findFunc(lpc)
	if !ok {
		return nil
	}
	var frames []Frame
	var tree uint64
	inl := false
	if off, ok := f.funcdata(funcdataInlTree); ok && t.hasGofunc && f.pcdata(pcdataInlTreeIndex) != 0 {
		tree, inl = t.gofunc+uint64(off), true
	}
	for range maxInlineFrames {
		file, line := t.fileLine(f, lpc)
		ix := int32(-1)
		if inl {
			ix = t.pcvalue(f, f.pcdata(pcdataInlTreeIndex), lpc)
		}
		if ix < 0 {
			return append(frames, Frame{Position: Position{Function: f.name(), File: file, Line: line}})
		}
		rec, ok := b.readLink(tree+uint64(ix)*inlinedCallSize, inlinedCallSize)
		if !ok {
			return append(frames, Frame{Position: Position{Function: f.name(), File: file, Line: line}})
		}
		le := binary.LittleEndian
		name := t.funcName(int32(le.Uint32(rec[4:])))
		parent := int32(le.Uint32(rec[8:]))
		frames = append(frames, Frame{Position: Position{Function: name, File: file, Line: line}, Inlined: true})
		if parent < 0 {
			break // corrupt: end with the physical function
		}
		lpc = f.entry + uint64(parent)
	}
	return append(frames, Frame{Position: Position{Function: f.name(), File: "?"}})
}

// String formats f as "name file:line".
func (f Func) String() string {
	var sb strings.Builder
	sb.WriteString(f.Name)
	if f.File != "" {
		fmt.Fprintf(&sb, " %s:%d", f.File, f.Line)
	}
	return sb.String()
}

// FuncsWithPrefix returns the entries of the functions whose names start
// with prefix ("runtime.AddCleanup[": every instance of a generic
// function), at most max of them, in no particular order.
func (b *Binary) FuncsWithPrefix(prefix string, max int) []uint64 {
	t := b.pcln
	if t == nil {
		return nil
	}
	t.nameOnce.Do(t.indexNames)
	var out []uint64
	for name, e := range t.byName {
		if len(out) >= max {
			break
		}
		if strings.HasPrefix(name, prefix) {
			out = append(out, b.toRun(e))
		}
	}
	return out
}
