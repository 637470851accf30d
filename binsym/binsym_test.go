package binsym_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/testbuild"
	"github.com/ctxleak/ctxleak/internal/testexit"
)

// The test programs are built and run once per test binary, by TestMain:
// testdata/prog as a default (non-PIE) executable, as a PIE and stripped
// with -ldflags=-s -w; testdata/rtypes stripped, as `go test` links, and
// not. Each run prints what the program saw about itself (facts), and the
// default one also writes a heap dump.
var progs struct {
	arch     string // GOARCH of the programs: the machine's
	dir      string
	exe      string // default build
	pie      string // -buildmode=pie
	stripped string // -ldflags=-s -w
	arm64    string // GOARCH=arm64 (or amd64 on arm64), not run
	i386     string // GOARCH=386, not run: a 32-bit ELF file
	pieStrip string // -buildmode=pie -ldflags=-s -w
	extStrip string // -ldflags=-s -w -linkmode=external, if there is a C linker
	dump     string // heap dump written by exe

	rtypes         string // testdata/rtypes
	rtypesStripped string // testdata/rtypes, -ldflags=-s -w

	facts, pieFacts, strippedFacts, pieStripFacts, extStripFacts facts
	rtypesFacts, rtypesStrippedFacts                             facts
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "binsym-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := 2
	if err := setup(dir); err != nil {
		fmt.Fprintln(os.Stderr, "binsym test setup:", err)
	} else {
		binsym.TestExe, binsym.TestStrippedExe, binsym.Test386Exe = progs.exe, progs.stripped, progs.i386
		code = m.Run()
	}
	os.RemoveAll(dir)
	testexit.Exit(code)
}

func setup(dir string) error {
	// The test programs are built for the machine: a 386 test binary on
	// an amd64 kernel (GOARCH=386 go test) reads amd64 programs.
	native := runtime.GOARCH
	if native == "386" {
		native = "amd64"
	}
	if runtime.GOOS != "linux" || (native != "amd64" && native != "arm64") {
		return fmt.Errorf("the tests need linux/amd64 or linux/arm64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	progs.dir = dir
	progs.arch = native
	progs.exe = filepath.Join(dir, "prog")
	progs.pie = filepath.Join(dir, "prog.pie")
	progs.stripped = filepath.Join(dir, "prog.stripped")
	progs.dump = filepath.Join(dir, "prog.dump")
	progs.arm64 = filepath.Join(dir, "prog.other")
	other := "GOARCH=arm64"
	if native == "arm64" {
		other = "GOARCH=amd64"
	}
	progs.i386 = filepath.Join(dir, "prog.386")
	progs.pieStrip = filepath.Join(dir, "prog.pie.stripped")
	progs.rtypes = filepath.Join(dir, "rtypes")
	progs.rtypesStripped = filepath.Join(dir, "rtypes.stripped")
	const prog, rtypes = "./testdata/prog", "./testdata/rtypes"
	builds := []struct {
		exe  string
		args []string
		env  string
	}{
		{progs.exe, []string{prog}, ""},
		{progs.pie, []string{"-buildmode=pie", prog}, ""},
		{progs.stripped, []string{"-ldflags=-s -w", prog}, ""},
		{progs.arm64, []string{prog}, other},
		{progs.i386, []string{prog}, "GOARCH=386"},
		{progs.pieStrip, []string{"-buildmode=pie", "-ldflags=-s -w", prog}, ""},
		{progs.rtypes, []string{rtypes}, ""},
		{progs.rtypesStripped, []string{"-ldflags=-s -w", rtypes}, ""},
	}
	if _, err := exec.LookPath("gcc"); err == nil {
		progs.extStrip = filepath.Join(dir, "prog.ext.stripped")
		builds = append(builds, struct {
			exe  string
			args []string
			env  string
		}{progs.extStrip, []string{"-ldflags=-s -w -linkmode=external", prog}, "CGO_ENABLED=1"})
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, bd := range builds {
		wg.Go(func() {
			env := []string{"CGO_ENABLED=0", "GOFLAGS=", "GOARCH=" + native, bd.env}
			if out, err := testbuild.Build(bd.exe, env, bd.args...); err != nil {
				errs[i] = fmt.Errorf("%s %v\n%s", bd.env, err, out)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	runs := []struct {
		exe  string
		args []string
		dst  *facts
	}{
		{progs.exe, []string{"-dump", progs.dump}, &progs.facts},
		{progs.pie, nil, &progs.pieFacts},
		{progs.stripped, nil, &progs.strippedFacts},
		{progs.pieStrip, nil, &progs.pieStripFacts},
		{progs.rtypes, nil, &progs.rtypesFacts},
		{progs.rtypesStripped, nil, &progs.rtypesStrippedFacts},
	}
	if progs.extStrip != "" {
		runs = append(runs, struct {
			exe  string
			args []string
			dst  *facts
		}{progs.extStrip, nil, &progs.extStripFacts})
	}
	errs = make([]error, len(runs))
	for i, r := range runs {
		wg.Go(func() {
			out, err := exec.Command(r.exe, r.args...).Output()
			if err != nil {
				errs[i] = fmt.Errorf("%s: %v", r.exe, err)
				return
			}
			*r.dst, errs[i] = parseFacts(out)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// facts are the lines a test program printed: "kind key value...", by kind
// and key.
type facts map[string]map[string][]string

func parseFacts(out []byte) (facts, error) {
	f := facts{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 3 {
			return nil, fmt.Errorf("bad line %q", sc.Text())
		}
		if f[fields[0]] == nil {
			f[fields[0]] = map[string][]string{}
		}
		f[fields[0]][fields[1]] = fields[2:]
	}
	return f, sc.Err()
}

// get returns the values of the fact kind/key.
func (f facts) get(t *testing.T, kind, key string) []string {
	t.Helper()
	v, ok := f[kind][key]
	if !ok {
		t.Fatalf("the test program printed no %s %s", kind, key)
	}
	return v
}

func num(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func open(t *testing.T, path string) *binsym.Binary {
	t.Helper()
	b, err := binsym.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestOpen(t *testing.T) {
	b := open(t, progs.exe)
	if got, want := b.GoVersion(), runtime.Version(); got != want {
		t.Errorf("GoVersion() = %q, want %q", got, want)
	}
	if b.Arch() != progs.arch {
		t.Errorf("Arch() = %q, want %q", b.Arch(), progs.arch)
	}
	if b.PIE() || !b.HasSymbols() || !b.HasDWARF() {
		t.Errorf("PIE, HasSymbols, HasDWARF = %v, %v, %v; want false, true, true", b.PIE(), b.HasSymbols(), b.HasDWARF())
	}
	if m := b.Missing(); len(m) != 0 {
		t.Errorf("Missing() = %q, want nothing", m)
	}
	if err := b.LoadTypes(); err != nil {
		t.Errorf("LoadTypes: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text")
	if err := os.WriteFile(text, []byte("#!/bin/sh\necho hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated")
	data, err := os.ReadFile(progs.exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, data[:4096], 0o600); err != nil {
		t.Fatal(err)
	}
	// An ELF executable that is not Go: the test program with its Go
	// sections renamed.
	notGo := filepath.Join(dir, "notgo")
	if err := os.WriteFile(notGo, renameGoSections(t, data), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want string
	}{
		{filepath.Join(dir, "missing"), "FILE: no such file"},
		{dir, "is a directory"},
		{text, "not an ELF executable"},
		{truncated, "truncated file"},
		{notGo, "not a Go executable"},
	} {
		_, err := binsym.Open(tc.path)
		if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), tc.path, "FILE"), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("Open(%s) = %v, want an error naming the file and saying %q", filepath.Base(tc.path), err, tc.want)
		}
		if got, want := errors.Is(err, binsym.ErrNotGo), tc.path == notGo; got != want {
			t.Errorf("Open(%s): errors.Is(err, ErrNotGo) = %v, want %v", filepath.Base(tc.path), got, want)
		}
	}
}

// renameGoSections returns a copy of the ELF file data whose .go.buildinfo
// and .gopclntab sections are renamed, so that nothing marks it as Go.
func renameGoSections(t *testing.T, data []byte) []byte {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(data)
	shstr := f.Section(".shstrtab")
	for _, name := range []string{".go.buildinfo", ".gopclntab"} {
		s := f.Section(name)
		if s == nil {
			t.Fatalf("no %s section", name)
		}
		// The name's offset in the section name table is in the
		// section header: find the name and overwrite it.
		i := bytes.Index(out[shstr.Offset:shstr.Offset+shstr.Size], []byte(name+"\x00"))
		if i < 0 {
			t.Fatalf("no %s in the section names", name)
		}
		copy(out[shstr.Offset+uint64(i):], strings.Repeat("x", len(name)))
		// Clear the build info's magic, which buildinfo also finds by
		// scanning the data segment.
		if name == ".go.buildinfo" {
			magic := []byte("\xff Go buildinf:")
			for j := bytes.Index(out, magic); j >= 0; j = bytes.Index(out, magic) {
				copy(out[j:], "\x00")
			}
		}
	}
	return out
}

func TestFunc(t *testing.T) {
	b := open(t, progs.exe)
	testFuncs(t, b, progs.facts)
}

// testFuncs checks function names and positions against what the program
// saw.
func testFuncs(t *testing.T, b *binsym.Binary, f facts) {
	v := f.get(t, "pc", "main.work")
	pc, entry, name, file := num(t, v[0]), num(t, v[1]), v[2], v[3]
	line, _ := strconv.Atoi(v[4])
	got, ok := b.CallSite(pc)
	want := binsym.Func{Name: name, Entry: entry, PC: pc - 1, File: file, Line: line}
	if !ok || got != want {
		t.Errorf("CallSite(%#x) = %+v, %v; want %+v", pc, got, ok, want)
	}
	if got, ok := b.Func(pc - 1); !ok || got != want {
		t.Errorf("Func(%#x) = %+v, %v; want %+v", pc-1, got, ok, want)
	}
	if got, ok := b.Func(entry); !ok || got.Name != name || got.Entry != entry || got.PC != entry {
		t.Errorf("Func(entry %#x) = %+v, %v; want %s at its entry", entry, got, ok, name)
	}
	if got, ok := b.FuncByName(name); !ok || got.Entry != entry {
		t.Errorf("FuncByName(%q) = %+v, %v; want entry %#x", name, got, ok, entry)
	}
	if got, ok := b.Func(1); ok {
		t.Errorf("Func(1) = %+v, want none", got)
	}

	// Closures: the code pointer of a func value names the closure.
	v = f.get(t, "closure", "main.scheduleRetry.func1")
	code := num(t, v[0])
	if got, ok := b.Func(code); !ok || got.Name != "main.scheduleRetry.func1" || got.Entry != code {
		t.Errorf("Func(closure code %#x) = %+v, %v; want main.scheduleRetry.func1 at its entry", code, got, ok)
	}

	// Inlining: the physical frame's return PC expands to the inlined
	// call and its caller.
	v = f.get(t, "frames", "main.outer")
	pc = num(t, v[0])
	var wantFrames []binsym.Frame
	for i := 1; i+2 < len(v); i += 3 {
		line, _ := strconv.Atoi(v[i+2])
		wantFrames = append(wantFrames, binsym.Frame{Position: binsym.Position{Function: v[i], File: v[i+1], Line: line}, Inlined: i+3 < len(v)})
	}
	cs, ok := b.CallSite(pc)
	if !ok || cs.Name != "main.outer" {
		t.Fatalf("CallSite(%#x) = %+v, %v; want main.outer", pc, cs, ok)
	}
	if cs.Line != wantFrames[0].Line {
		t.Errorf("CallSite(%#x).Line = %d, want the inlined function's line %d", pc, cs.Line, wantFrames[0].Line)
	}
	frames := b.Frames(cs.PC)
	switch {
	case b.HasSymbols() && !slices.Equal(frames, wantFrames):
		t.Errorf("Frames(%#x) = %+v, want %+v", cs.PC, frames, wantFrames)
	case !b.HasSymbols() && (len(frames) != 1 || frames[0].Function != "main.outer"):
		t.Errorf("Frames(%#x) without symbols = %+v, want main.outer alone", cs.PC, frames)
	}
}

func TestArgsSize(t *testing.T) {
	b := open(t, progs.exe)
	v := progs.facts.get(t, "funcentry", "main.wait")
	waitEntry := num(t, v[0])
	args, ok := b.ArgsSize(waitEntry)
	// wait(ctx context.Context, ch chan struct{}, n int) int: spill slots
	// for its four argument words; the result has none.
	if !ok || args != 32 {
		t.Fatalf("ArgsSize(main.wait) = %d, %v; want 32", args, ok)
	}
	if _, ok := b.ArgsSize(1); ok {
		t.Errorf("ArgsSize(1) = ok, want false")
	}

	// In the dump, the goroutine blocked in main.wait holds ctx in the
	// spill area for wait's arguments, which is in its caller's frame at
	// [MinFrameSize, MinFrameSize+args).
	frames, err := readDumpFrames(progs.dump)
	if err != nil {
		t.Fatalf("reading the dump: %v", err)
	}
	ctxData := num(t, progs.facts.get(t, "ctxdata", "main.wait")[0])
	var callee, caller *dumpFrame
	for i := range frames {
		if frames[i].name == "main.wait" && i+1 < len(frames) && frames[i+1].goroutine == frames[i].goroutine {
			callee, caller = &frames[i], &frames[i+1]
		}
	}
	if callee == nil || caller.name != "main.caller" {
		t.Fatalf("no frame of main.wait called by main.caller in the dump")
	}
	if callee.entry != waitEntry || caller.childSP != callee.sp || caller.depth != callee.depth+1 {
		t.Fatalf("unexpected frames: %+v %+v", *callee, *caller)
	}
	lo, hi := uint64(b.MinFrameSize()), uint64(b.MinFrameSize()+args)
	var found []uint64
	for _, off := range caller.ptrs {
		if off+8 <= uint64(len(caller.contents)) && binary.LittleEndian.Uint64(caller.contents[off:]) == ctxData {
			found = append(found, off)
		}
	}
	if len(found) == 0 {
		t.Fatalf("main.caller's frame has no live pointer to ctx (%#x); pointers at %v", ctxData, caller.ptrs)
	}
	for _, off := range found {
		if off < lo || off >= hi {
			t.Errorf("ctx pointer at offset %d of main.caller's frame, outside wait's argument area [%d, %d)", off, lo, hi)
		}
	}
	// ctx's data word is the second word of wait's first argument.
	if want := lo + 8; !slices.Contains(found, want) {
		t.Errorf("ctx pointer at offsets %v of main.caller's frame, want %d", found, want)
	}
	t.Logf("ArgsSize(main.wait) = %d; ctx data pointer at main.caller frame offsets %v (MinFrameSize %d)", args, found, b.MinFrameSize())
}

func TestGlobal(t *testing.T) {
	b := open(t, progs.exe)
	testGlobals(t, b, progs.facts)
}

func testGlobals(t *testing.T, b *binsym.Binary, f facts) {
	for _, name := range []string{"main.cache", "main.current", "main.greeting", "main.counter", "main.table", "main.holder"} {
		v := f.get(t, "global", name)
		addr, size := num(t, v[0]), num(t, v[1])
		want := binsym.Symbol{Name: name, Addr: addr, Size: size}
		for _, a := range []uint64{addr, addr + size - 1} {
			if got, ok := b.Global(a); !ok || got != want {
				t.Errorf("Global(%#x) = %+v, %v; want %+v", a, got, ok, want)
			}
			if got, ok := b.Symbol(a); !ok || got != want {
				t.Errorf("Symbol(%#x) = %+v, %v; want %+v", a, got, ok, want)
			}
		}
		if got, ok := b.LookupSymbol(name); !ok || got != want {
			t.Errorf("LookupSymbol(%q) = %+v, %v; want %+v", name, got, ok, want)
		}
	}
	// A function is a symbol but not a global.
	entry := num(t, f.get(t, "funcentry", "main.wait")[0])
	if got, ok := b.Global(entry); ok {
		t.Errorf("Global(main.wait) = %+v, want none", got)
	}
	if got, ok := b.Symbol(entry + 1); !ok || got.Name != "main.wait" || got.Addr != entry {
		t.Errorf("Symbol(main.wait+1) = %+v, %v; want main.wait", got, ok)
	}
}

func TestGlobalType(t *testing.T) {
	b := open(t, progs.exe)
	for name, want := range map[string]string{
		"main.cache":   "map[string]*main.Upload",
		"main.current": "*main.Upload",
		"main.table":   "[4]uint32",
		"main.holder":  "struct { main.ctx context.Context; main.name string }",
	} {
		if got := b.GlobalType(name); got == nil || got.Name != want {
			t.Errorf("GlobalType(%q) = %v, want %s", name, got, want)
		}
	}
	holder := b.GlobalType("main.holder")
	path, ft, data := holder.PointerAt(8)
	if path != ".ctx" || ft == nil || ft.Name != "context.Context" || !data {
		t.Errorf("main.holder.PointerAt(8) = %q, %v, %v; want .ctx, context.Context, true", path, ft, data)
	}
	if b.GlobalType("main.nosuch") != nil {
		t.Errorf("GlobalType(main.nosuch) != nil")
	}
}

func TestTypes(t *testing.T) {
	b := open(t, progs.exe)
	testTypes(t, b, progs.facts)
}

func testTypes(t *testing.T, b *binsym.Binary, f facts) {
	names := []string{
		"context.valueCtx", "*context.valueCtx", "context.cancelCtx", "*context.cancelCtx",
		"context.timerCtx", "context.withoutCancelCtx", "[]uint8", "map[string]context.Context",
		"main.Upload", "*main.Upload", "string", "func() int", "chan struct {}", "[4]uint32",
		"context.Context", "interface {}",
	}
	for _, name := range names {
		v := f.get(t, "type", name)
		addr, size, kind := num(t, v[0]), int64(num(t, v[1])), v[2]
		typ := b.TypeAt(addr)
		if typ == nil || typ.Name != name || typ.Size != size || typ.Kind.String() != kind {
			t.Errorf("TypeAt(%#x) = %+v, want %s (%d bytes, %s)", addr, typ, name, size, kind)
			continue
		}
		if got := b.TypeByName(name); got != typ {
			t.Errorf("TypeByName(%q) = %p, want %p", name, got, typ)
		}
		if got, ok := b.TypeAddr(typ); !ok || got != addr {
			t.Errorf("TypeAddr(%s) = %#x, %v; want %#x", name, got, ok, addr)
		}
	}
	// The dynamic type of an interface: an itab's Type, an eface's type.
	for _, name := range []string{"*context.valueCtx", "*context.cancelCtx", "*context.timerCtx", "context.withoutCancelCtx", "context.backgroundCtx"} {
		v := f.get(t, "itab", name)
		itab, typAddr := num(t, v[0]), num(t, v[1])
		if got, ok := b.ItabType(itab); !ok || got != typAddr {
			t.Errorf("ItabType(%s itab %#x) = %#x, %v; want %#x", name, itab, got, ok, typAddr)
		}
		if typ := b.TypeAt(typAddr); typ == nil || typ.Name != name {
			t.Errorf("TypeAt(%#x) = %v, want %s", typAddr, typ, name)
		}
		if b.HasSymbols() && !goAtLeast(b, 27) { // Go 1.27 gives static itabs no symbol
			want := "go:itab." + name + ",context.Context"
			if s, ok := b.Symbol(itab); !ok || s.Name != want || s.Addr != itab {
				t.Errorf("Symbol(itab %#x) = %+v, %v; want %s", itab, s, ok, want)
			}
		}
	}
	if _, ok := b.ItabType(num(t, f.get(t, "type", "string")[0])); ok && b.HasSymbols() {
		t.Errorf("ItabType(a type descriptor) = ok, want false")
	}
	v := f.get(t, "eface", "*main.Upload")
	if typ := b.TypeAt(num(t, v[0])); typ == nil || typ.Name != "*main.Upload" {
		t.Errorf("TypeAt(eface word) = %v, want *main.Upload", typ)
	}
	if typ := b.TypeAt(num(t, f.get(t, "pc", "main.work")[0])); typ != nil {
		t.Errorf("TypeAt(a PC) = %v, want nil", typ)
	}
}

func TestTypeStructure(t *testing.T) {
	testTypeStructure(t, open(t, progs.exe))
}

// testTypeStructure checks the fields and pointers of the test program's
// types.
func testTypeStructure(t *testing.T, b *binsym.Binary) {
	upload := b.TypeByName("main.Upload")
	if upload == nil {
		t.Fatal("no main.Upload")
	}
	var fields []string
	for _, f := range upload.Fields {
		fields = append(fields, fmt.Sprintf("%s@%d:%s", f.Name, f.Offset, f.Type))
	}
	want := []string{
		"Name@0:string", "Body@16:[]uint8", "Meta@40:map[string]context.Context", "Next@48:*main.Upload",
		"Pair@56:[2]interface {}", "Ctx@88:context.Context", "Done@104:chan struct {}", "Hook@112:func() int",
	}
	if !slices.Equal(fields, want) {
		t.Errorf("main.Upload fields = %q, want %q", fields, want)
	}
	byName := func(name string) *binsym.Type {
		for _, f := range upload.Fields {
			if f.Name == name {
				return f.Type
			}
		}
		t.Fatalf("no field %s", name)
		return nil
	}
	if body := byName("Body"); body.Kind != reflect.Slice || body.Elem.Name != "uint8" || body.Elem.Size != 1 {
		t.Errorf("Body: %+v, want a slice of uint8", body)
	}
	if meta := byName("Meta"); meta.Kind != reflect.Map || meta.Key.Name != "string" || meta.Elem.Name != "context.Context" ||
		meta.Header == nil || meta.Header.Name != "map<string,context.Context>" {
		t.Errorf("Meta: %+v, want map of string to context.Context with a map<string,context.Context> header", meta)
	}
	if next := byName("Next"); next.Kind != reflect.Pointer || next.Elem != upload {
		t.Errorf("Next: %+v, want a pointer to main.Upload", next)
	}
	if pair := byName("Pair"); pair.Kind != reflect.Array || pair.Len != 2 || !pair.Elem.EmptyInterface() {
		t.Errorf("Pair: %+v, want [2]interface {}", pair)
	}
	if ctx := byName("Ctx"); ctx.Kind != reflect.Interface || ctx.EmptyInterface() || ctx.Size != 16 {
		t.Errorf("Ctx: %+v, want a non-empty interface", ctx)
	}
	if done := byName("Done"); done.Kind != reflect.Chan || done.Elem.Name != "struct {}" || done.Header == nil || done.Header.Name != "hchan<struct {}>" {
		t.Errorf("Done: %+v, want chan struct {} with an hchan header", done)
	}

	for _, tc := range []struct {
		typ  string
		off  int64
		path string
		ft   string
		data bool
	}{
		{"main.Upload", 0, ".Name", "string", false},
		{"main.Upload", 8, "", "", false}, // Name's length
		{"main.Upload", 16, ".Body", "[]uint8", false},
		{"main.Upload", 24, "", "", false},
		{"main.Upload", 40, ".Meta", "map[string]context.Context", false},
		{"main.Upload", 48, ".Next", "*main.Upload", false},
		{"main.Upload", 56, ".Pair[0]", "interface {}", false},
		{"main.Upload", 80, ".Pair[1]", "interface {}", true},
		{"main.Upload", 96, ".Ctx", "context.Context", true},
		{"main.Upload", 104, ".Done", "chan struct {}", false},
		{"main.Upload", 112, ".Hook", "func() int", false},
		{"main.Upload", 120, "", "", false},
		{"main.Upload", -8, "", "", false},
		{"main.Upload", 4, "", "", false},
		{"context.valueCtx", 0, ".Context", "context.Context", false},
		{"context.valueCtx", 8, ".Context", "context.Context", true},
		{"context.valueCtx", 24, ".key", "interface {}", true},
		{"context.valueCtx", 40, ".val", "interface {}", true},
		{"context.cancelCtx", 8, ".Context", "context.Context", true},
		{"context.withoutCancelCtx", 8, ".c", "context.Context", true},
		{"context.timerCtx", 8, ".cancelCtx.Context", "context.Context", true},
		{"*main.Upload", 0, "", "*main.Upload", false},
	} {
		typ := b.TypeByName(tc.typ)
		if typ == nil {
			t.Errorf("no type %s", tc.typ)
			continue
		}
		path, ft, data := typ.PointerAt(tc.off)
		if path != tc.path || ft.String() != tc.ft && (ft != nil || tc.ft != "") || data != tc.data {
			t.Errorf("%s.PointerAt(%d) = %q, %v, %v; want %q, %q, %v", tc.typ, tc.off, path, ft, data, tc.path, tc.ft, tc.data)
		}
	}

	// A slice's backing array.
	arr := binsym.ArrayOf(upload.Fields[1].Type.Elem, 1<<20)
	if arr.Name != "[1048576]uint8" || arr.Size != 1<<20 {
		t.Errorf("ArrayOf(uint8, 1<<20) = %+v", arr)
	}
	ptrs := binsym.ArrayOf(b.TypeByName("*main.Upload"), 4)
	if path, ft, _ := ptrs.PointerAt(24); path != "[3]" || ft.Name != "*main.Upload" {
		t.Errorf("[4]*main.Upload.PointerAt(24) = %q, %v", path, ft)
	}

	for _, tc := range []struct{ typ, pointee, ifacePointee string }{
		{"*context.valueCtx", "context.valueCtx", "context.valueCtx"},
		{"context.withoutCancelCtx", "<nil>", "context.withoutCancelCtx"},
		{"[]uint8", "uint8", "[]uint8"},
		{"string", "uint8", "string"},
		{"map[string]context.Context", "map<string,context.Context>", "map<string,context.Context>"},
		{"chan struct {}", "hchan<struct {}>", "hchan<struct {}>"},
		{"func() int", "<nil>", "<nil>"},
		{"context.Context", "<nil>", "context.Context"},
	} {
		typ := b.TypeByName(tc.typ)
		if got := typ.Pointee().String(); got != tc.pointee {
			t.Errorf("%s.Pointee() = %s, want %s", tc.typ, got, tc.pointee)
		}
		if got := typ.IfacePointee().String(); got != tc.ifacePointee {
			t.Errorf("%s.IfacePointee() = %s, want %s", tc.typ, got, tc.ifacePointee)
		}
	}

	for name, want := range map[string]bool{
		"*context.valueCtx": true, "context.valueCtx": false, "context.withoutCancelCtx": false,
		"map[string]context.Context": true, "func() int": true, "[]uint8": false, "string": false,
	} {
		if typ := b.TypeByName(name); typ == nil || typ.DirectIface() != want {
			t.Errorf("%s.DirectIface() = %v, want %v", name, !want, want)
		}
	}
}

func TestClosureType(t *testing.T) {
	b := open(t, progs.exe)
	code := num(t, progs.facts.get(t, "closure", "main.scheduleRetry.func1")[0])
	ct := b.ClosureType(code)
	if ct == nil {
		t.Fatal("ClosureType(main.scheduleRetry.func1) = nil")
	}
	if ct.Name != "main.scheduleRetry.func1" || ct.Size != 16 || len(ct.Fields) != 2 {
		t.Fatalf("ClosureType = %+v, want main.scheduleRetry.func1 {F; u}", ct)
	}
	if path, ft, _ := ct.PointerAt(8); path != ".u" || ft.Name != "*main.Upload" {
		t.Errorf("closure.PointerAt(8) = %q, %v; want .u *main.Upload", path, ft)
	}
	if b.ClosureType(code+1) != nil {
		t.Errorf("ClosureType(code+1) != nil")
	}

	// A variable captured by reference.
	code = num(t, progs.facts.get(t, "closure", "main.tally.func1")[0])
	ct = b.ClosureType(code)
	if ct == nil || len(ct.Fields) != 2 {
		t.Fatalf("ClosureType(main.tally.func1) = %+v, want {F; &n}", ct)
	}
	if path, ft, _ := ct.PointerAt(8); path != ".&n" || ft.Name != "*int" {
		t.Errorf("closure.PointerAt(8) = %q, %v; want .&n *int", path, ft)
	}
}

func TestPIE(t *testing.T) {
	b := open(t, progs.pie)
	f := progs.pieFacts
	if !b.PIE() {
		t.Fatal("PIE() = false")
	}
	if m := strings.Join(b.Missing(), "\n"); !strings.Contains(m, "PIE") {
		t.Errorf("Missing() = %q, want it to mention PIE", m)
	}
	v := f.get(t, "pc", "main.work")
	pc, entry := num(t, v[0]), num(t, v[1])
	if got, ok := b.CallSite(pc); ok {
		t.Errorf("before SetBias, CallSite(%#x) = %+v, want none", pc, got)
	}
	if _, err := b.BiasFor("main.work", entry+1); err == nil {
		t.Errorf("BiasFor(main.work, unaligned entry) succeeded")
	}
	if _, err := b.BiasFor("main.nosuch", entry); err == nil {
		t.Errorf("BiasFor(main.nosuch) succeeded")
	}
	bias, err := b.BiasFor("main.work", entry)
	if err != nil {
		t.Fatal(err)
	}
	b.SetBias(bias)
	if len(b.Missing()) != 0 {
		t.Errorf("Missing() after SetBias = %q", b.Missing())
	}
	testFuncs(t, b, f)
	testGlobals(t, b, f)
	testTypes(t, b, f)
}

func TestStripped(t *testing.T) {
	b := open(t, progs.stripped)
	f := progs.strippedFacts
	if b.HasSymbols() || b.HasDWARF() {
		t.Errorf("HasSymbols, HasDWARF = %v, %v; want false, false", b.HasSymbols(), b.HasDWARF())
	}
	m := strings.Join(b.Missing(), "\n")
	for _, want := range []string{"symbol table", "DWARF", "runtime type descriptors", "ClosureType", "GlobalType"} {
		if !strings.Contains(m, want) {
			t.Errorf("Missing() = %q, want it to mention %s", m, want)
		}
	}
	if err := b.LoadTypes(); err != nil {
		t.Errorf("LoadTypes() = %v, want nil: types come from the descriptors", err)
	}
	testFuncs(t, b, f)
	// Types come from the runtime type descriptors.
	testTypes(t, b, f)
	testTypeStructure(t, b)
	v := f.get(t, "closure", "main.scheduleRetry.func1")
	if ct := b.ClosureType(num(t, v[0])); ct != nil {
		t.Errorf("ClosureType = %v, want nil without DWARF", ct)
	}
	if gt := b.GlobalType("main.cache"); gt != nil {
		t.Errorf("GlobalType = %v, want nil without DWARF", gt)
	}
	v = f.get(t, "global", "main.cache")
	if s, ok := b.Global(num(t, v[0])); ok {
		t.Errorf("Global = %+v, want none without symbols", s)
	}
	// Static itabs are still read from the data, and recognized by the
	// module's itablinks.
	v = f.get(t, "itab", "*context.valueCtx")
	if got, ok := b.ItabType(num(t, v[0])); !ok || got != num(t, v[1]) {
		t.Errorf("ItabType = %#x, %v; want %s", got, ok, v[1])
	}
	if got, ok := b.ItabType(num(t, v[0]) + 8); ok {
		t.Errorf("ItabType(itab+8) = %#x, want none", got)
	}
}

// TestStrippedPIE reads a stripped PIE: the text start comes from the
// module data, whose pointers are relocations.
func TestStrippedPIE(t *testing.T) {
	b := open(t, progs.pieStrip)
	f := progs.pieStripFacts
	v := f.get(t, "pc", "main.work")
	bias, err := b.BiasFor("main.work", num(t, v[1]))
	if err != nil {
		t.Fatal(err)
	}
	b.SetBias(bias)
	testFuncs(t, b, f)
	// The descriptors' pointers are relocations.
	testTypes(t, b, f)
	v = f.get(t, "itab", "*context.valueCtx")
	if got, ok := b.ItabType(num(t, v[0])); !ok || got != num(t, v[1]) {
		t.Errorf("ItabType = %#x, %v; want %s", got, ok, v[1])
	}
}

// TestStrippedExternal reads a stripped executable linked by the C linker,
// whose .text starts with C code before the Go text.
func TestStrippedExternal(t *testing.T) {
	if progs.extStrip == "" {
		t.Skip("no C linker (gcc) to link externally")
	}
	b := open(t, progs.extStrip)
	testFuncs(t, b, progs.extStripFacts)
	testTypes(t, b, progs.extStripFacts)
}

func TestConcurrentLookups(t *testing.T) {
	b := open(t, progs.exe)
	stripped := open(t, progs.stripped)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			testTypes(t, b, progs.facts)
			testGlobals(t, b, progs.facts)
			testTypes(t, stripped, progs.strippedFacts)
		})
	}
	wg.Wait()
}

// TestSplitIndex indexes the DWARF of the test program in one piece and in
// three (in two, three and four with CTXLEAK_LONG set): the same index.
func TestSplitIndex(t *testing.T) {
	b := open(t, progs.exe)
	pieces := []int{3}
	if os.Getenv("CTXLEAK_LONG") != "" {
		pieces = []int{2, 3, 4}
	}
	for _, n := range pieces {
		if names, err := binsym.CheckSplitIndex(b, n); err != nil || names < 1000 {
			t.Errorf("in %d pieces: %d names, %v", n, names, err)
		}
	}
}

// TestOtherArch reads the test program built for the other architecture
// (arm64 on amd64), which cannot run here: what the binary says must agree
// with itself.
func TestOtherArch(t *testing.T) {
	b := open(t, progs.arm64)
	wantArch, wantMin := "arm64", int64(8)
	if progs.arch == "arm64" {
		wantArch, wantMin = "amd64", 0
	}
	if b.Arch() != wantArch || b.MinFrameSize() != wantMin || len(b.Missing()) != 0 {
		t.Errorf("Arch, MinFrameSize, Missing = %s, %d, %q; want %s, %d, nothing", b.Arch(), b.MinFrameSize(), b.Missing(), wantArch, wantMin)
	}
	wait, ok := b.FuncByName("main.wait")
	if !ok || !strings.HasSuffix(wait.File, "testdata/prog/main.go") {
		t.Fatalf("FuncByName(main.wait) = %+v, %v", wait, ok)
	}
	if args, ok := b.ArgsSize(wait.Entry); !ok || args != 32 {
		t.Errorf("ArgsSize(main.wait) = %d, %v; want 32", args, ok)
	}
	if s, ok := b.Symbol(wait.Entry + 4); !ok || s.Name != "main.wait" {
		t.Errorf("Symbol(main.wait+4) = %+v, %v", s, ok)
	}
	cache, ok := b.LookupSymbol("main.cache")
	if g, ok2 := b.Global(cache.Addr + 7); !ok || !ok2 || g != cache {
		t.Errorf("Global(main.cache+7) = %+v, want %+v", g, cache)
	}
	itab, ok := binsym.StaticItab(b, "*context.valueCtx", "context.Context")
	if !ok {
		t.Fatal("no static itab for *context.valueCtx")
	}
	typAddr, ok := b.ItabType(itab)
	if typ := b.TypeAt(typAddr); !ok || typ == nil || typ.Name != "*context.valueCtx" || typ.Elem.Size != 48 {
		t.Errorf("TypeAt(ItabType(%#x)) = %v, want *context.valueCtx", itab, typ)
	}
	code := b.ClosureType(mustFunc(t, b, "main.scheduleRetry.func1").Entry)
	if code == nil || len(code.Fields) != 2 || code.Fields[1].Name != "u" {
		t.Errorf("ClosureType(main.scheduleRetry.func1) = %+v", code)
	}
}

func mustFunc(t *testing.T, b *binsym.Binary, name string) binsym.Func {
	t.Helper()
	f, ok := b.FuncByName(name)
	if !ok {
		t.Fatalf("no function %s", name)
	}
	return f
}

// goAtLeast reports whether b was built by Go 1.minor or later.
func goAtLeast(b *binsym.Binary, minor int) bool {
	v, ok := strings.CutPrefix(b.GoVersion(), "go1.")
	if i := strings.IndexAny(v, ".-rcbeta "); i >= 0 {
		v = v[:i]
	}
	n, err := strconv.Atoi(v)
	return !ok || err != nil || n >= minor
}
