package binsym

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
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
