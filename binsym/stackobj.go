package binsym

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math/bits"
)

// Stack objects are the address-taken locals and arguments of a function
// (src/runtime/stack.go, stackObjectRecord; the compiler writes them in
// cmd/compile/internal/liveness/plive.go, emitStackObjects). The stack maps
// leave them out: the garbage collector scans such an object only when a
// pointer it finds reaches it. The records are the function's funcdata
// FUNCDATA_StackObjects: a pointer-sized count, then that many records of
// four 32-bit fields (offset, size, pointer bytes, offset of the pointer
// mask from the module's rodata).

const (
	funcdataStackObjects = 2  // abi.FUNCDATA_StackObjects, Go 1.16 to 1.27
	stackObjectRecSize   = 16 // runtime.stackObjectRecord

	// maxStackObjects bounds the records of one function: the compiler
	// writes one per address-taken variable.
	maxStackObjects = 1 << 16
	// maxStackObjectSize is the runtime's largest stack (1 GiB on 64-bit).
	maxStackObjectSize = 1 << 30
)

// A StackObject is an address-taken local or argument of a function, as its
// stack-object record describes it.
type StackObject struct {
	// Off is where the object is in the frame: when negative, its offset
	// from the frame's varp (the top of the locals, below the saved frame
	// pointer and return address); when not, from its argp (the start of
	// the function's arguments, in its caller's frame).
	Off int64
	// Size is the object's size in bytes.
	Size int64
	// PtrBytes is the length of the object's prefix that holds pointers.
	PtrBytes int64
	// Mask has one bit a word (8 bytes) of the first PtrBytes bytes, set
	// for a pointer, least significant bit first.
	Mask []byte
}

// Pointers yields the offsets in the object of its pointer words, in
// ascending order.
func (o *StackObject) Pointers() iter.Seq[int64] {
	return func(yield func(int64) bool) {
		words := o.PtrBytes / 8
		for i, b := range o.Mask {
			for b != 0 {
				j := int64(i)*8 + int64(bits.TrailingZeros8(b))
				if j >= words || !yield(j*8) {
					return
				}
				b &= b - 1
			}
		}
	}
}

// A StackObjectError says why the stack-object records of a function could
// not be read: the executable is corrupt, or not one of the Go versions
// binsym reads.
type StackObjectError struct {
	Func string // the function's name
	Addr uint64 // the link address of the offending record or mask
	Msg  string
}

func (e *StackObjectError) Error() string {
	return fmt.Sprintf("stack objects of %s at %#x: %s", e.Func, e.Addr, e.Msg)
}

// errNoRodata is returned when the executable's rodata start is unknown.
var errNoRodata = errors.New("neither module data nor a runtime.rodata symbol: stack object pointer masks cannot be found")

// StackObjects returns the stack objects of the function whose code holds
// pc (normally its entry), in the order of its records, or nil if it has
// none or pc is in no function. An error says the records could not be
// read; the objects read before it are returned with it. It reads the
// executable for every call: callers cache by entry.
func (b *Binary) StackObjects(pc uint64) ([]StackObject, error) {
	t := b.pcln
	gofunc, ok := b.gofunc()
	if t == nil || !ok {
		return nil, nil
	}
	f, ok := t.findFunc(b.toLink(pc))
	if !ok {
		return nil, nil
	}
	off, ok := f.funcdata(funcdataStackObjects)
	if !ok {
		return nil, nil
	}
	bad := func(a uint64, format string, args ...any) error {
		return &StackObjectError{Func: f.name(), Addr: a, Msg: fmt.Sprintf(format, args...)}
	}
	a := gofunc + uint64(off)
	head, ok := b.readLink(a, 8)
	if !ok {
		return nil, bad(a, "count not in the file")
	}
	n := binary.LittleEndian.Uint64(head)
	if n == 0 {
		return nil, nil
	}
	if n > maxStackObjects {
		return nil, bad(a, "%d records, more than %d", n, maxStackObjects)
	}
	// readLink checks the records are in the file before allocating.
	recs, ok := b.readLink(a+8, int(n)*stackObjectRecSize)
	if !ok {
		return nil, bad(a+8, "%d records not in the file", n)
	}
	rodata, ok := b.rodata()
	if !ok {
		return nil, errNoRodata
	}
	objs := make([]StackObject, 0, n)
	le := binary.LittleEndian
	for i := range int(n) {
		r := recs[i*stackObjectRecSize:]
		ra := a + 8 + uint64(i*stackObjectRecSize)
		o := StackObject{
			Off:      int64(int32(le.Uint32(r))),
			Size:     int64(int32(le.Uint32(r[4:]))),
			PtrBytes: int64(int32(le.Uint32(r[8:]))),
		}
		maskOff := uint64(le.Uint32(r[12:]))
		switch {
		case o.Size <= 0 || o.Size > maxStackObjectSize:
			return objs, bad(ra, "record %d: size %d", i, o.Size)
		case o.PtrBytes < 0 || o.PtrBytes > o.Size || o.PtrBytes%8 != 0:
			return objs, bad(ra, "record %d: %d pointer bytes in %d", i, o.PtrBytes, o.Size)
		case len(objs) > 0 && o.Off < objs[len(objs)-1].Off+objs[len(objs)-1].Size:
			// The compiler sorts them by offset, and the runtime throws
			// on objects out of order or overlapping. A frame then holds
			// no more of them than it has bytes, and they no more bytes
			// than it has, however many records a corrupt binary gives.
			return objs, bad(ra, "record %d at offset %d: before the end of record %d (%d bytes at %d)", i, o.Off, i-1, objs[len(objs)-1].Size, objs[len(objs)-1].Off)
		}
		if o.PtrBytes > 0 {
			words := o.PtrBytes / 8
			// readLink checks the mask is in the file before allocating.
			mask, ok := b.readLink(rodata+maskOff, int((words+7)/8))
			if !ok {
				return objs, bad(rodata+maskOff, "record %d: pointer mask of %d bits not in the file", i, words)
			}
			o.Mask = mask
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// gofunc returns the link address of go:func.*, which funcdata offsets
// are from: the symbol, or in a stripped executable the module data's.
func (b *Binary) gofunc() (uint64, bool) {
	if b.pcln != nil && b.pcln.hasGofunc {
		return b.pcln.gofunc, true
	}
	if m, ok := b.moduledataAddr(); ok {
		if a := b.moduledataWord(m, b.mdLayout(m).gofunc); a != 0 {
			return a, true
		}
	}
	return 0, false
}

// rodata returns the link address of the module's read-only data, which
// stack-object records give their pointer masks' offsets from.
func (b *Binary) rodata() (uint64, bool) {
	if m, ok := b.moduledataAddr(); ok {
		if r := b.moduledataWord(m, b.mdLayout(m).rodata); r != 0 {
			return r, true
		}
	}
	return b.linkSymbol("runtime.rodata")
}
