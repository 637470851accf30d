package heapdump

import (
	"bytes"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// memFile returns a file in memory (memfd_create) that holds data: a file
// of the operating system's, which the reader maps, without a disk.
func memFile(t testing.TB, data []byte) *os.File {
	fd, err := unix.MemfdCreate("dump", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "dump")
	if _, err := f.Write(data); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return f
}

// A parser that maps the file reads what one that copies it reads: one
// parser or parts, with windows of a few pages that records straddle, and
// when mapping fails from some offset on, where the reader goes on with a
// buffer.
func TestMappedAgrees(t *testing.T) {
	defer func(c int, f int64) { chunk, mapFailsFrom = c, f }(chunk, mapFailsFrom)
	d := progDump(t, "-small", "-gc=false")
	data := d.bytes(t)
	f, err := os.Open(d.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := int64(len(data))
	if newMapping(f, size) == nil {
		t.Fatal("the file is not mapped")
	}
	for _, c := range []int{chunk, 4 << 10} {
		chunk = c
		for _, fails := range []int64{-1, size / 2} {
			mapFailsFrom = fails
			for name, set := range map[string]func(*parser){"one parser": sequential, "parts": speculative(0.3, 0.6)} {
				want, err := parseWith(bytes.NewReader(data), size, set)
				if err != nil {
					t.Fatal(err)
				}
				p, err := parseMapped(f, size, set)
				mapped := p.r.m != nil // not gone back to a buffer
				if err != nil {
					t.Fatalf("%s, reads of %d bytes, mapping failing from %d: %v", name, c, fails, err)
				}
				if diff := parseDiff(want, p); diff != "" {
					t.Errorf("%s, reads of %d bytes, mapping failing from %d: %s differ", name, c, fails, diff)
				}
				// Windows of 4 chunks: with reads of 4 KiB, the reader
				// must have moved past the failure.
				if small := int64(4*c) < size/4; mapped == (fails >= 0 && small) {
					t.Errorf("%s, reads of %d bytes, mapping failing from %d: mapped at the end %v", name, c, fails, mapped)
				}
			}
		}
	}
}
