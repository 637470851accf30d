package binsym

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Checks that an executable is the one that wrote a heap dump. A dump
// records each stack frame's function name and entry PC, the Go version,
// and the address, size and pointer mask of the data and bss segments:
// all of them come from the executable, so another build (another program,
// the same source built with other flags, one more function) differs in
// at least one of them.

// MismatchError says that an executable did not write a heap dump: the
// first difference found between them.
type MismatchError struct {
	Binary string // the executable's path
	What   string // what differs: "Go version", "function main.work", "data segment", ...
	Dump   string // what the dump says
	Exe    string // what the executable says
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s is not the executable that wrote the dump: %s: the dump has %s, the executable %s",
		e.Binary, e.What, e.Dump, e.Exe)
}

func (b *Binary) mismatch(what, dump, exe string) error {
	return &MismatchError{Binary: b.path, What: what, Dump: dump, Exe: exe}
}

// baseVersion returns a Go version without the suffix that names the
// GOEXPERIMENT settings: " X:greenteagc" (Go 1.25 and earlier) or
// "-X:nogreenteagc" (Go 1.26).
func baseVersion(v string) string {
	if i := strings.Index(v, "X:"); i > 0 && (v[i-1] == ' ' || v[i-1] == '-') {
		return v[:i-1]
	}
	return v
}

// MatchGoVersion checks the Go version a dump records (runtime.Version()
// of the process, "go1.25.1") against the executable's. The GOEXPERIMENT
// suffix (" X:greenteagc", "-X:nogreenteagc") is ignored: the runtime
// leaves it out of some versions. An empty version is not checked.
func (b *Binary) MatchGoVersion(v string) error {
	dv, bv := baseVersion(v), baseVersion(b.goVersion)
	if dv == "" || bv == "" || dv == bv {
		return nil
	}
	return b.mismatch("Go version", dv, bv)
}

// A FrameMatcher checks the stack frames of a dump against an executable,
// each function once: the frames of a dump repeat a few functions. It is
// not safe for concurrent use.
type FrameMatcher struct {
	b     *Binary
	funcs map[uint64]checkedFunc // by run-time entry
}

// checkedFunc is a function whose name and entry matched: its name and
// the run-time end of its code.
type checkedFunc struct {
	name string
	end  uint64
}

// NewFrameMatcher returns a FrameMatcher for b. Set the bias (SetBias) of a
// PIE first.
func (b *Binary) NewFrameMatcher() *FrameMatcher {
	return &FrameMatcher{b: b, funcs: map[uint64]checkedFunc{}}
}

// Match checks a stack frame of a dump: that the function whose code holds
// the run-time address entry starts there and is named name, and that pc,
// the frame's PC (a return address, or entry in a frame that has not
// started), is in its code. Frames the dump could not name ("" or
// "unknown function") and frames of functions outside the executable's
// text when it can load plugins are not checked; nor is pc when it is 0.
func (m *FrameMatcher) Match(name string, entry, pc uint64) error {
	if name == "" || name == "unknown function" || entry == 0 {
		return nil
	}
	b := m.b
	c, ok := m.funcs[entry]
	if !ok || c.name != name {
		t := b.pcln
		if t == nil {
			return nil // functions are unknown: Missing says so
		}
		what := "function " + name
		f, ok := t.findFunc(b.toLink(entry))
		switch {
		case !ok && b.loadsPlugins():
			return nil // a plugin's function
		case !ok:
			return b.mismatch(what, fmt.Sprintf("its entry at %#x", entry), "no function there")
		case f.entry != b.toLink(entry):
			return b.mismatch(what, fmt.Sprintf("its entry at %#x", entry), fmt.Sprintf("%s starting at %#x", f.name(), b.toRun(f.entry)))
		case !t.funcNameIs(f.nameOff(), name):
			return b.mismatch(what, fmt.Sprintf("it at %#x", entry), fmt.Sprintf("%s there", f.name()))
		}
		c = checkedFunc{name: name, end: b.toRun(f.end())}
		m.funcs[entry] = c
	}
	// A return address may be the end of the code, after a call that does
	// not return, as tracebacks know.
	if pc != 0 && (pc < entry || pc > c.end) {
		return b.mismatch("function "+name, fmt.Sprintf("a frame at PC %#x in it", pc),
			fmt.Sprintf("its code at [%#x, %#x)", entry, c.end))
	}
	return nil
}

// loadsPlugins reports whether the executable links the plugin package: its
// dumps may have frames in functions of plugins. plugin.Open is often
// inlined; plugin.open and the runtime's plugin.lastmoduleinit are not.
func (b *Binary) loadsPlugins() bool {
	for _, name := range []string{"plugin.Open", "plugin.open", "plugin.lastmoduleinit"} {
		if _, ok := b.pcln.entryByName(name); ok {
			return true
		}
	}
	return false
}

// A SegmentKind names a global segment of a dump: "data" or "bss".
type SegmentKind string

// The segments a heap dump records.
const (
	DataSegment SegmentKind = "data"
	BSSSegment  SegmentKind = "bss"
)

// MatchSegment checks a data or bss segment of a dump: its run-time
// address, its size, and the offsets of its pointer slots (ascending),
// which the runtime derives from the executable's pointer mask of the
// segment. Set the bias (SetBias) of a PIE first. It returns nil when the
// executable's module data and symbols cannot say where the segment is.
func (b *Binary) MatchSegment(kind SegmentKind, addr, size uint64, ptrOffsets []uint64) error {
	lo, hi, mask, ok := b.segment(kind)
	if !ok {
		return nil
	}
	what := string(kind) + " segment"
	switch {
	case hi < lo:
		return b.mismatch(what, fmt.Sprintf("%d bytes", size), fmt.Sprintf("corrupt bounds [%#x, %#x)", lo, hi))
	case addr != b.toRun(lo):
		return b.mismatch(what, fmt.Sprintf("its start at %#x", addr), fmt.Sprintf("it at %#x", b.toRun(lo)))
	case size != hi-lo:
		return b.mismatch(what, fmt.Sprintf("%d bytes", size), fmt.Sprintf("%d bytes", hi-lo))
	case mask == 0:
		return nil
	}
	bits, n, err := b.gcProgMask(mask, size/8)
	if err != nil {
		return &OpenError{Path: b.path, Err: fmt.Errorf("pointer mask of the %s segment at %#x: %v", kind, mask, err)}
	}
	bit := func(i uint64) bool { return i < n && bits[i/8]>>(i%8)&1 != 0 }
	next := uint64(0) // the next slot of the executable's mask to compare
	for _, off := range ptrOffsets {
		for ; next < n && next*8 < off; next++ {
			if bit(next) {
				return b.mismatch(what, fmt.Sprintf("no pointer at offset %#x", next*8), "a pointer there")
			}
		}
		if off%8 != 0 || !bit(off/8) {
			return b.mismatch(what, fmt.Sprintf("a pointer at offset %#x", off), "none there")
		}
		next = off/8 + 1
	}
	for ; next < n; next++ {
		if bit(next) {
			return b.mismatch(what, fmt.Sprintf("no pointer at offset %#x", next*8), "a pointer there")
		}
	}
	return nil
}

// Words of runtime.moduledata, the same from Go 1.20 to 1.27.
const (
	mdData   = 26 // data, edata, bss, ebss
	mdGCData = 35 // gcdata, gcbss: the GC programs of the data and bss segments
)

// segment returns the link-time bounds of the data or bss segment and the
// link address of its GC program (0 if unknown), from the module data or
// else the symbols runtime.data, runtime.edata, runtime.bss, runtime.ebss.
func (b *Binary) segment(kind SegmentKind) (lo, hi, prog uint64, ok bool) {
	i := 0
	if kind == BSSSegment {
		i = 1
	}
	if m, found := b.moduledataAddr(); found {
		lo, hi = b.moduledataWord(m, mdData+2*i), b.moduledataWord(m, mdData+2*i+1)
		if lo != 0 || hi != 0 {
			return lo, hi, b.moduledataWord(m, mdGCData+i), true
		}
	}
	names := [...][2]string{{"runtime.data", "runtime.edata"}, {"runtime.bss", "runtime.ebss"}}
	lo, ok1 := b.linkSymbol(names[i][0])
	hi, ok2 := b.linkSymbol(names[i][1])
	return lo, hi, 0, ok1 && ok2
}

// gcProgMask runs the GC program at link address a (runtime.runGCProg) and
// returns the pointer mask it writes, one bit a word, and its number of
// bits, refusing a program that writes more than maxBits bits or runs past
// its section.
//
// The program's instructions: 0 stops; 0nnnnnnn emits the n bits that
// follow in (n+7)/8 bytes; 10000000 n c and 1nnnnnnn c repeat the last n
// bits c times, n and c varints.
func (b *Binary) gcProgMask(a, maxBits uint64) ([]byte, uint64, error) {
	s := b.sectionAt(a)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, 0, errors.New("not in the file")
	}
	r := bufio.NewReaderSize(io.NewSectionReader(s, int64(a-s.Addr), int64(s.Size-(a-s.Addr))), 512)
	mask := make([]byte, (maxBits+7)/8)
	n := uint64(0)
	get := func(i uint64) byte { return mask[i/8] >> (i % 8) & 1 }
	set := func(i uint64, v byte) { mask[i/8] |= v << (i % 8) }
	for {
		inst, err := r.ReadByte()
		if err != nil {
			return nil, 0, fmt.Errorf("no stop instruction: %v", err)
		}
		k := uint64(inst & 0x7f)
		if inst&0x80 == 0 {
			if k == 0 {
				return mask, n, nil
			}
			if k > maxBits-n {
				return nil, 0, fmt.Errorf("more than %d bits", maxBits)
			}
			var c byte
			for j := range k {
				if j%8 == 0 {
					if c, err = r.ReadByte(); err != nil {
						return nil, 0, fmt.Errorf("literal of %d bits: %v", k, err)
					}
				}
				set(n+j, c>>(j%8)&1)
			}
			n += k
			continue
		}
		if k == 0 {
			if k, err = binary.ReadUvarint(r); err != nil {
				return nil, 0, fmt.Errorf("repeat length: %v", err)
			}
		}
		c, err := binary.ReadUvarint(r)
		switch {
		case err != nil:
			return nil, 0, fmt.Errorf("repeat count: %v", err)
		case k == 0 || k > n:
			return nil, 0, fmt.Errorf("repeat of %d bits after %d", k, n)
		case c > (maxBits-n)/k:
			return nil, 0, fmt.Errorf("more than %d bits", maxBits)
		}
		for j := range k * c {
			set(n+j, get(n+j-k))
		}
		n += k * c
	}
}
