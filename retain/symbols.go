package retain

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

// `go test` links the test binary with -s -w: it has no symbol table, so a
// heap dump's globals cannot be named from it. The same test binary built
// with `go test -c`, from the same sources with the same flags, lays out
// its code and its globals at the same addresses and keeps the symbols (it
// differs in the order of some type descriptors, so only the names of
// globals are taken from it). testGlobals builds it once per process, when
// a report first needs a global's name, checks that its globals are where
// the running binary has them, and keeps their symbols.

// startDir is the working directory when the package was initialised: the
// package directory under `go test`, before a test may change it.
var startDir, _ = os.Getwd()

// relinkTimeout bounds the `go test -c` that rebuilds the test binary.
const relinkTimeout = 2 * time.Minute

var relinked struct {
	sync.Mutex
	done bool
	bin  *relinkedBinary
	err  error
	took time.Duration // how long the relink took, for the tests
}

// testGlobals returns the global variables of the running test binary, bin,
// from a relinked copy of it with symbols, after checking them against the
// data and bss segments of a heap dump the process wrote, segs. The relink
// runs once per process; its result, or its failure, is kept.
func testGlobals(segs []heapdump.Segment, bin *binsym.Binary) ([]binsym.Symbol, error) {
	relinked.Lock()
	defer relinked.Unlock()
	if !relinked.done {
		start := time.Now()
		relinked.bin, relinked.err = relink(bin)
		relinked.took = time.Since(start)
		relinked.done = true
	}
	if relinked.err != nil {
		return nil, relinked.err
	}
	// The relinked binary gives link-time addresses; a PIE runs at a bias.
	bias := bin.Bias()
	if err := relinked.bin.check(segs, bias); err != nil {
		return nil, fmt.Errorf("%s and the relinked one does not match it: %v", stripped, err)
	}
	syms := make([]binsym.Symbol, len(relinked.bin.syms))
	for i, s := range relinked.bin.syms {
		s.Addr += bias
		syms[i] = s
	}
	return syms, nil
}

// stripped is what a report says when the symbols cannot be had.
const stripped = "the test binary has no symbol table (go test links it with -s -w)"

// relink builds the running test binary again with `go test -c` and reads
// its globals, after checking that it lays out memory as bin does.
func relink(bin *binsym.Binary) (*relinkedBinary, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok || !strings.HasSuffix(bi.Path, ".test") {
		return nil, errors.New("the executable has no symbol table and is not a go test binary that could be relinked")
	}
	goTool, err := goCommand()
	if err != nil {
		return nil, fmt.Errorf("%s and no go command was found to relink it: %v", stripped, err)
	}
	dir, err := os.MkdirTemp("", "ctxleak-relink-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", stripped, err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "relinked.test")
	args, env := relinkArgs(bi, out)

	ctx, cancel := context.WithTimeout(context.Background(), relinkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = startDir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = time.Second
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s and relinking it failed: go %s: %v%s",
			stripped, strings.Join(args, " "), err, lastLines(output.String(), 3))
	}
	rb, err := readRelinked(bin.Path(), out)
	if err != nil {
		return nil, fmt.Errorf("%s and the relinked one (go %s) %v", stripped, strings.Join(args, " "), err)
	}
	return rb, nil
}

// goCommand finds the go command; tests replace it.
var goCommand = findGo

// findGo returns the go command of the toolchain that built this binary,
// or else the one on $PATH.
func findGo() (string, error) {
	if root := runtime.GOROOT(); root != "" { //nolint:staticcheck // the toolchain that built the binary, when known
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return exec.LookPath("go")
}

// goEnvSetting matches the build settings that are environment variables:
// CGO_ENABLED, GOARCH, GOAMD64, GOEXPERIMENT and the like.
var goEnvSetting = regexp.MustCompile(`^(CGO_[A-Z]+|GO[A-Z0-9]+)$`)

// relinkArgs returns the arguments of `go test -c` that rebuild the binary
// bi describes into out, and the environment settings to add. Flags such
// as -race, -tags, -gcflags, -cover and -trimpath come from the build
// settings the binary records.
func relinkArgs(bi *debug.BuildInfo, out string) (args, env []string) {
	args = []string{"test", "-c", "-o", out}
	for _, s := range bi.Settings {
		switch {
		case strings.HasPrefix(s.Key, "-"):
			args = append(args, s.Key+"="+s.Value)
		case goEnvSetting.MatchString(s.Key):
			env = append(env, s.Key+"="+s.Value)
		}
	}
	return append(args, strings.TrimSuffix(bi.Path, ".test")), env
}

// relinkedBinary is what testGlobals keeps of the relinked test binary: the
// globals of its .data and .bss sections, and the pointer masks of those
// sections, to check against a heap dump's, all at link-time addresses.
type relinkedBinary struct {
	syms  []binsym.Symbol
	masks map[heapdump.SegmentKind]ptrMask
}

// ptrMask is where a data or bss segment starts, how long it is, and the
// offsets of its pointer words, ascending.
type ptrMask struct {
	addr, size uint64
	ptrs       []uint64
}

// readRelinked checks that the relinked executable has its sections where
// the running one, at path, has them, and that it has this package's
// variable startDir where the running process has it; it returns its
// globals and pointer masks.
func readRelinked(path, relinkedPath string) (*relinkedBinary, error) {
	orig, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer orig.Close()
	f, err := elf.Open(relinkedPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	for _, s := range orig.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if r := f.Section(s.Name); r == nil || r.Addr != s.Addr || r.Size != s.Size {
			return nil, fmt.Errorf("differs: it has no section %s at %#x of %d bytes", s.Name, s.Addr, s.Size)
		}
	}
	all, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("has no symbols: %v", err)
	}
	rb := &relinkedBinary{masks: map[heapdump.SegmentKind]ptrMask{}}
	named := map[string]uint64{}
	for _, s := range all {
		switch s.Name {
		case selfSymbol, "runtime.data", "runtime.edata", "runtime.bss", "runtime.ebss", "runtime.gcdata", "runtime.gcbss":
			named[s.Name] = s.Value
		}
		if int(s.Section) >= len(f.Sections) || elf.ST_TYPE(s.Info) != elf.STT_OBJECT || s.Size == 0 {
			continue
		}
		switch f.Sections[s.Section].Name {
		case ".data", ".bss":
			rb.syms = append(rb.syms, binsym.Symbol{Name: s.Name, Addr: s.Value, Size: s.Size})
		}
	}
	// A PIE runs at a page-aligned bias: the offsets within a page agree.
	if self, want := named[selfSymbol], uint64(uintptr(unsafe.Pointer(&startDir))); self == 0 || (self-want)%pageSize != 0 {
		return nil, fmt.Errorf("has %s at %#x, which cannot be the running process's %#x", selfSymbol, self, want)
	}
	for _, seg := range []struct {
		kind                heapdump.SegmentKind
		start, end, program string
	}{
		{heapdump.SegmentData, "runtime.data", "runtime.edata", "runtime.gcdata"},
		{heapdump.SegmentBSS, "runtime.bss", "runtime.ebss", "runtime.gcbss"},
	} {
		start, end, prog := named[seg.start], named[seg.end], named[seg.program]
		if start == 0 || end < start || prog == 0 {
			return nil, fmt.Errorf("has no %s, %s or %s symbol", seg.start, seg.end, seg.program)
		}
		m := ptrMask{addr: start, size: end - start}
		m.ptrs, err = readGCProg(f, prog, m.size/ptrSize)
		if err != nil {
			return nil, fmt.Errorf("has a pointer mask %s that cannot be read: %v", seg.program, err)
		}
		rb.masks[seg.kind] = m
	}
	return rb, nil
}

const (
	selfSymbol = "github.com/ctxleak/ctxleak/retain.startDir"
	pageSize   = 4096
	ptrSize    = 8
)

// check compares the relinked binary's data and bss segments, moved by
// bias, with those of a heap dump: same place, same size, pointers in the
// same words. The dump's pointer slots come from the running binary's own
// pointer masks, so equal masks mean the globals that hold pointers (all
// those in .data and .bss) are where the relinked binary has them.
func (rb *relinkedBinary) check(segs []heapdump.Segment, bias uint64) error {
	if len(segs) == 0 {
		return errors.New("the heap dump has no data or bss segment")
	}
	for _, s := range segs {
		m, ok := rb.masks[s.Kind]
		if !ok {
			return fmt.Errorf("no %s segment", s.Kind)
		}
		if m.addr+bias != s.Addr || m.size != s.Size {
			return fmt.Errorf("its %s segment is at %#x, %d bytes; the dump's at %#x, %d bytes",
				s.Kind, m.addr+bias, m.size, s.Addr, s.Size)
		}
		if !slices.Equal(m.ptrs, s.PtrOffsets) {
			return fmt.Errorf("its %s segment has pointers in other words than the dump's", s.Kind)
		}
	}
	return nil
}

// readGCProg reads the GC program at addr in f, which describes nwords
// words, and returns the offsets of the pointer words. The encoding is the
// runtime's (runtime/mbitmap.go, runGCProg):
//
//	00000000: stop
//	0nnnnnnn: emit n bits copied from the next (n+7)/8 bytes
//	10000000 n c: repeat the previous n bits c times; n, c are varints
//	1nnnnnnn c: repeat the previous n bits c times; c is a varint
//
// The linker describes the data and bss sections with such programs.
func readGCProg(f *elf.File, addr, nwords uint64) ([]uint64, error) {
	var sect *elf.Section
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && addr >= s.Addr && addr < s.Addr+s.Size {
			sect = s
		}
	}
	if sect == nil {
		return nil, fmt.Errorf("no section holds %#x", addr)
	}
	// A program is never longer than its bits written as literals.
	n := min(sect.Addr+sect.Size-addr, nwords/8+nwords/64+64)
	prog := make([]byte, n)
	if _, err := sect.ReadAt(prog, int64(addr-sect.Addr)); err != nil {
		return nil, err
	}
	return decodeGCProg(prog, nwords)
}

// decodeGCProg runs a GC program that describes at most nwords words and
// returns the offsets of the pointer words.
func decodeGCProg(prog []byte, nwords uint64) ([]uint64, error) {
	bits := make([]bool, 0, nwords)
	p := 0
	next := func() (byte, error) {
		if p >= len(prog) {
			return 0, errors.New("truncated")
		}
		p++
		return prog[p-1], nil
	}
	varint := func() (uint64, error) {
		var v uint64
		for shift := 0; shift < 64; shift += 7 {
			b, err := next()
			if err != nil {
				return 0, err
			}
			v |= uint64(b&0x7f) << shift
			if b&0x80 == 0 {
				return v, nil
			}
		}
		return 0, errors.New("varint overflows")
	}
	for {
		inst, err := next()
		if err != nil {
			return nil, err
		}
		n := uint64(inst & 0x7f)
		if inst&0x80 == 0 {
			if n == 0 {
				break
			}
			if uint64(len(bits))+n > nwords {
				return nil, errors.New("longer than its segment")
			}
			for i := uint64(0); i < n; i++ {
				if i%8 == 0 {
					if inst, err = next(); err != nil {
						return nil, err
					}
				}
				bits = append(bits, inst>>(i%8)&1 != 0)
			}
			continue
		}
		if n == 0 {
			if n, err = varint(); err != nil {
				return nil, err
			}
		}
		c, err := varint()
		if err != nil {
			return nil, err
		}
		if n == 0 || n > uint64(len(bits)) || c > nwords || uint64(len(bits))+n*c > nwords {
			return nil, errors.New("repeats more than its segment")
		}
		from := uint64(len(bits)) - n
		for range c {
			bits = append(bits, bits[from:from+n]...)
			from += n
		}
	}
	var ptrs []uint64
	for i, b := range bits {
		if b {
			ptrs = append(ptrs, uint64(i)*ptrSize)
		}
	}
	return ptrs, nil
}

// lastLines returns the last n lines of s joined by "; " after ": ", or ""
// for an empty s.
func lastLines(s string, n int) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return ": " + strings.Join(lines, "; ")
}
