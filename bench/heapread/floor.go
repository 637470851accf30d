package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// floorChunk is how much the floor reader reads at a time.
const floorChunk = 4 << 20

// floorReader reads a heap dump front to back and decodes every uvarint of
// every record, skipping the bytes of strings and contents without looking
// at them: the least any reader of the format has to do, the "decode
// floor" that issue 10 compares ctxleak holders with.
type floorReader struct {
	f    *os.File
	size int64
	buf  []byte
	base int64 // file offset of buf[0]
	pos  int
	end  int

	ints, records int64
}

// need makes sure that n bytes (or the rest of the file) are in buf.
func (r *floorReader) need(n int) error {
	if r.end-r.pos >= n {
		return nil
	}
	copy(r.buf, r.buf[r.pos:r.end])
	r.base += int64(r.pos)
	r.end -= r.pos
	r.pos = 0
	m, err := r.f.ReadAt(r.buf[r.end:], r.base+int64(r.end))
	r.end += m
	if err != nil && err != io.EOF {
		return err
	}
	return nil
}

func (r *floorReader) uvarint() (uint64, error) {
	if err := r.need(10); err != nil {
		return 0, err
	}
	var v uint64
	for s := uint(0); r.pos < r.end; s += 7 {
		b := r.buf[r.pos]
		r.pos++
		if s > 63 {
			break
		}
		v |= uint64(b&0x7f) << s
		if b < 0x80 {
			r.ints++
			return v, nil
		}
	}
	return 0, fmt.Errorf("offset %d: bad uvarint", r.base+int64(r.pos))
}

// uvarints decodes n uvarints.
func (r *floorReader) uvarints(n int) error {
	for range n {
		if _, err := r.uvarint(); err != nil {
			return err
		}
	}
	return nil
}

// skipString decodes a length and skips that many bytes.
func (r *floorReader) skipString() error {
	n, err := r.uvarint()
	if err != nil {
		return err
	}
	if n > uint64(r.size) {
		return fmt.Errorf("offset %d: string of %d bytes", r.base+int64(r.pos), n)
	}
	if left := uint64(r.end - r.pos); n <= left {
		r.pos += int(n)
		return nil
	}
	r.base += int64(r.pos) + int64(n)
	r.pos, r.end = 0, 0
	return nil
}

// fields decodes a field list: kind and offset pairs up to kind 0.
func (r *floorReader) fields() error {
	for {
		k, err := r.uvarint()
		if err != nil || k == 0 {
			return err
		}
		if _, err := r.uvarint(); err != nil {
			return err
		}
	}
}

// floor reads the dump at path as floorReader does and returns the
// numbers of records and uvarints.
func floor(path string) (records, ints int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	r := &floorReader{f: f, size: fi.Size(), buf: make([]byte, floorChunk)}
	const header = "go1.7 heap dump\n"
	if err := r.need(len(header)); err != nil {
		return 0, 0, err
	}
	if string(r.buf[:min(r.end, len(header))]) != header {
		return 0, 0, errors.New("not a heap dump")
	}
	r.pos = len(header)
	for {
		tag, err := r.uvarint()
		if err != nil {
			return 0, 0, err
		}
		r.records++
		switch tag {
		case 0: // end of dump
			if end := r.base + int64(r.pos); end != r.size {
				return 0, 0, fmt.Errorf("end-of-dump record at offset %d of %d", end, r.size)
			}
			return r.records, r.ints, nil
		case 1: // object: address, contents, fields
			err = r.uvarints(1)
			if err == nil {
				err = r.skipString()
			}
			if err == nil {
				err = r.fields()
			}
		case 2: // other root: description, address
			if err = r.skipString(); err == nil {
				err = r.uvarints(1)
			}
		case 3: // type: address, size, name, indirect
			if err = r.uvarints(2); err == nil {
				if err = r.skipString(); err == nil {
					err = r.uvarints(1)
				}
			}
		case 4: // goroutine: 8 ints, wait reason, 4 ints
			if err = r.uvarints(8); err == nil {
				if err = r.skipString(); err == nil {
					err = r.uvarints(4)
				}
			}
		case 5: // frame: sp, depth, child sp, contents, 3 pcs, name, fields
			if err = r.uvarints(3); err == nil {
				if err = r.skipString(); err == nil {
					if err = r.uvarints(3); err == nil {
						if err = r.skipString(); err == nil {
							err = r.fields()
						}
					}
				}
			}
		case 6: // params: big endian, pointer size, arena, GOARCH, version, ncpu
			if err = r.uvarints(4); err == nil {
				if err = r.skipString(); err == nil {
					if err = r.skipString(); err == nil {
						err = r.uvarints(1)
					}
				}
			}
		case 7, 11: // finalizer
			err = r.uvarints(5)
		case 8: // itab
			err = r.uvarints(2)
		case 9: // OS thread
			err = r.uvarints(3)
		case 10: // memstats
			err = r.uvarints(24 + 256 + 1)
		case 12, 13: // data, bss: address, contents, fields
			if err = r.uvarints(1); err == nil {
				if err = r.skipString(); err == nil {
					err = r.fields()
				}
			}
		case 14: // defer
			err = r.uvarints(7)
		case 15: // panic
			err = r.uvarints(6)
		case 16: // memory profile bucket: address, size, frames, counts
			var n uint64
			if err = r.uvarints(2); err == nil {
				n, err = r.uvarint()
			}
			for i := uint64(0); err == nil && i < n; i++ {
				if err = r.skipString(); err == nil {
					if err = r.skipString(); err == nil {
						err = r.uvarints(1)
					}
				}
			}
			if err == nil {
				err = r.uvarints(2)
			}
		case 17: // alloc sample
			err = r.uvarints(2)
		default:
			return 0, 0, fmt.Errorf("offset %d: unknown record %d", r.base+int64(r.pos), tag)
		}
		if err != nil {
			return 0, 0, err
		}
	}
}
