package binsym_test

import (
	"os"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
)

// The benchmarks read the test program, or the executable named by
// $BINSYM_BINARY, e.g. a 10 MB one:
//
//	go build -o /tmp/vet cmd/vet
//	BINSYM_BINARY=/tmp/vet go test -run '^$' -bench . ./binsym/

func benchBinary() string {
	if p := os.Getenv("BINSYM_BINARY"); p != "" {
		return p
	}
	return progs.exe
}

// BenchmarkOpen measures Open and one function lookup: what a report pays
// before it needs types.
func BenchmarkOpen(b *testing.B) {
	path := benchBinary()
	if fi, err := os.Stat(path); err == nil {
		b.SetBytes(fi.Size())
	}
	for b.Loop() {
		bin, err := binsym.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := bin.FuncByName("runtime.main"); !ok {
			b.Fatal("no runtime.main")
		}
		bin.Close()
	}
}

// BenchmarkOpenTypes measures Open and the DWARF index.
func BenchmarkOpenTypes(b *testing.B) {
	path := benchBinary()
	if fi, err := os.Stat(path); err == nil {
		b.SetBytes(fi.Size())
	}
	for b.Loop() {
		bin, err := binsym.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := bin.LoadTypes(); err != nil {
			b.Fatal(err)
		}
		bin.Close()
	}
}

func BenchmarkCallSite(b *testing.B) {
	bin := benchOpen(b)
	f, ok := bin.FuncByName("runtime.main")
	if !ok {
		b.Fatal("no runtime.main")
	}
	for b.Loop() {
		if _, ok := bin.CallSite(f.Entry + 16); !ok {
			b.Fatal("no function")
		}
	}
}

func BenchmarkTypeAt(b *testing.B) {
	bin := benchOpen(b)
	addr, ok := bin.TypeAddr(bin.TypeByName("*runtime.g"))
	if !ok {
		b.Fatal("no *runtime.g")
	}
	for b.Loop() {
		if bin.TypeAt(addr) == nil {
			b.Fatal("no type")
		}
	}
}

func BenchmarkGlobal(b *testing.B) {
	bin := benchOpen(b)
	s, ok := bin.LookupSymbol("runtime.allp")
	if !ok {
		b.Fatal("no runtime.allp")
	}
	for b.Loop() {
		if _, ok := bin.Global(s.Addr); !ok {
			b.Fatal("no global")
		}
	}
}

func benchOpen(b *testing.B) *binsym.Binary {
	bin, err := binsym.Open(benchBinary())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bin.Close() })
	return bin
}

// BenchmarkTypeAtDescriptors measures Open and a first TypeAt from the
// runtime type descriptors (the executable's DWARF, if any, is not used):
// what a report on a `go test` or `go run` process pays for its first
// type. A context node leads to a map (cancelCtx.children), whose Header
// walks every descriptor once; *runtime.g leads to most of the runtime's
// types.
func BenchmarkTypeAtDescriptors(b *testing.B) {
	for _, name := range []string{"*context.valueCtx", "*context.cancelCtx", "*runtime.g"} {
		b.Run(name, func(b *testing.B) {
			bin := benchOpen(b)
			binsym.UseDescriptors(bin)
			addr, ok := bin.TypeAddr(bin.TypeByName(name))
			if !ok {
				b.Skipf("no %s", name)
			}
			for b.Loop() {
				bin, err := binsym.Open(benchBinary())
				if err != nil {
					b.Fatal(err)
				}
				binsym.UseDescriptors(bin)
				if bin.TypeAt(addr) == nil {
					b.Fatal("no type")
				}
				bin.Close()
			}
		})
	}
}

// BenchmarkTypeByNameDescriptors measures Open and a first TypeByName
// from the descriptors, which decodes every type.
func BenchmarkTypeByNameDescriptors(b *testing.B) {
	for b.Loop() {
		bin, err := binsym.Open(benchBinary())
		if err != nil {
			b.Fatal(err)
		}
		binsym.UseDescriptors(bin)
		if bin.TypeByName("*runtime.g") == nil {
			b.Fatal("no *runtime.g")
		}
		bin.Close()
	}
}
