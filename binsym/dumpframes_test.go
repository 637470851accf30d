package binsym_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// This file reads just enough of a heap dump (runtime/heapdump.go) to get
// at its goroutines' stack frames: it checks what binsym says about
// argument frames against what the runtime wrote. The real reader is
// package heap.

// dumpFrame is a stack frame record.
type dumpFrame struct {
	goroutine uint64 // address of the g
	sp        uint64
	depth     uint64
	childSP   uint64
	contents  []byte
	entry, pc uint64
	name      string
	ptrs      []uint64 // offsets of live pointers in contents
}

type dumpReader struct {
	r   *bufio.Reader
	err error
}

func (d *dumpReader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.err = err
	}
	return v
}

func (d *dumpReader) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > 1<<30 {
		d.err = fmt.Errorf("length %d too large", n)
		return nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.err = err
	}
	return b
}

func (d *dumpReader) fields() []uint64 {
	var offs []uint64
	for d.err == nil {
		kind := d.uvarint()
		if kind == 0 {
			break
		}
		offs = append(offs, d.uvarint())
	}
	return offs
}

// readDumpFrames returns the stack frames in the heap dump at path. It stops
// after the goroutines, which come before the roots and statistics.
func readDumpFrames(path string) ([]dumpFrame, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &dumpReader{r: bufio.NewReaderSize(f, 1<<20)}
	hdr := make([]byte, len("go1.7 heap dump\n"))
	if _, err := io.ReadFull(d.r, hdr); err != nil || string(hdr) != "go1.7 heap dump\n" {
		return nil, fmt.Errorf("bad header %q: %v", hdr, err)
	}
	var frames []dumpFrame
	var g uint64
	for d.err == nil {
		switch tag := d.uvarint(); tag {
		case 0, 9: // EOF, OS thread: the goroutines are done
			return frames, d.err
		case 1: // object
			d.uvarint()
			d.bytes()
			d.fields()
		case 3: // type
			d.uvarint()
			d.uvarint()
			d.bytes()
			d.uvarint()
		case 4: // goroutine
			g = d.uvarint()
			for range 7 { // sp, goid, gopc, status, system, background, waitsince
				d.uvarint()
			}
			d.bytes()     // wait reason
			for range 4 { // ctxt, m, defer, panic
				d.uvarint()
			}
		case 5: // stack frame
			fr := dumpFrame{goroutine: g}
			fr.sp = d.uvarint()
			fr.depth = d.uvarint()
			fr.childSP = d.uvarint()
			fr.contents = d.bytes()
			fr.entry = d.uvarint()
			fr.pc = d.uvarint()
			d.uvarint() // continpc
			fr.name = string(d.bytes())
			fr.ptrs = d.fields()
			frames = append(frames, fr)
		case 6: // params
			d.uvarint()
			d.uvarint()
			d.uvarint()
			d.uvarint()
			d.bytes()
			d.bytes()
			d.uvarint()
		case 8: // itab
			d.uvarint()
			d.uvarint()
		case 14: // defer
			for range 7 {
				d.uvarint()
			}
		case 15: // panic
			for range 6 {
				d.uvarint()
			}
		default:
			return nil, fmt.Errorf("unexpected record tag %d", tag)
		}
	}
	return nil, d.err
}
