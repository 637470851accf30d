package scenarios

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ctxleak/ctxleak/internal/selfdump"
)

// Global is a package-level variable of the scenarios, named for a heap
// dump analysis: the executable "go run" or "go test" builds has no symbol
// table and no DWARF, so the child says where its own variables are, and
// of what type (the address of its type descriptor), which types the paths
// from them.
type Global struct {
	Name      string `json:"name"`
	Addr      Addr   `json:"addr"`
	SizeBytes uint64 `json:"size_bytes"`
	TypeAddr  Addr   `json:"type_addr"`
}

// Addr is an address in a child process; JSON writes it as a hexadecimal
// string, "0xc000010000".
type Addr uint64

// MarshalText formats a as "0x" and lower-case hexadecimal digits.
func (a Addr) MarshalText() ([]byte, error) {
	return strconv.AppendUint([]byte("0x"), uint64(a), 16), nil
}

// UnmarshalText reads what MarshalText writes.
func (a *Addr) UnmarshalText(b []byte) error {
	s, ok := strings.CutPrefix(string(b), "0x")
	if !ok {
		return fmt.Errorf("address %q does not start with 0x", b)
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return fmt.Errorf("address %q: %w", b, err)
	}
	*a = Addr(v)
	return nil
}

// pkgPath is the import path of this package, as symbols name it.
const pkgPath = "github.com/ctxleak/ctxleak/scenarios"

// GlobalAt describes the package-level variable named name (its full
// symbol name, e.g. "example.com/pkg.cache") at p: its address, size and
// type.
func GlobalAt[T any](name string, p *T) Global {
	return Global{
		Name:      name,
		Addr:      Addr(uintptr(unsafe.Pointer(p))),
		SizeBytes: uint64(unsafe.Sizeof(*p)),
		TypeAddr:  typeAddr(reflect.TypeFor[T]()),
	}
}

// typeAddr returns the address of t's type descriptor in this process:
// the value of reflect's *rtype, which is the runtime's type.
func typeAddr(t reflect.Type) Addr {
	return Addr((*[2]uintptr)(unsafe.Pointer(&t))[1])
}

// globals lists the package-level variables of the catalogue that a
// scenario may keep a payload in, at their addresses in this process.
func globals() []Global {
	return []Global{
		GlobalAt(pkgPath+".cache", &cache),
		GlobalAt(pkgPath+".statePool", &statePool),
	}
}

// payloadAddrs returns the addresses of the tracked payloads still alive.
// It returns numbers, not pointers, so that nothing it did keeps a payload
// alive in the heap dump written next.
//
//go:noinline
func (e *Env) payloadAddrs() []Addr {
	e.mu.Lock()
	defer e.mu.Unlock()
	var addrs []Addr
	for _, w := range e.tracked {
		if p := w.Value(); p != nil {
			addrs = append(addrs, Addr(uintptr(unsafe.Pointer(p))))
		}
	}
	return addrs
}

// dump writes a heap dump of the process to DumpDir/name.heapdump, mode
// 0600, never overwriting a file, and returns its path. selfdump refuses it
// where the runtime would die (goroutines marked leaked on Go 1.27).
func (e *Env) dump(name string) (string, error) {
	d, err := selfdump.WriteFile(filepath.Join(e.opts.DumpDir, name+".heapdump"))
	if err != nil {
		return "", fmt.Errorf("heap dump: %w", err)
	}
	return d.Path, nil
}
