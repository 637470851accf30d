// Command rtypes is a test program for package binsym's reading of runtime
// type descriptors. It prints, one a line, the descriptor address of a
// variety of types as reflect sees them at run time (the data word of a
// reflect.Type, which is the *abi.Type), with reflect's String, Size and
// Kind:
//
//	type LABEL ADDR SIZE KIND STRING
//
// separated by tabs. It is built like a `go test` binary (-ldflags=-s -w,
// no symbols and no DWARF) and also unstripped, to compare the types read
// from descriptors with DWARF's.
package main

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sync"
	"time"
	"unsafe"

	dotpkg "github.com/ctxleak/ctxleak/binsym/testdata/rtypes/dot.pkg"
	innerpkg "github.com/ctxleak/ctxleak/binsym/testdata/rtypes/inner"
)

// Upload is a payload kept in a context.
type Upload struct {
	Name string
	Body []byte
	Meta map[string]context.Context
	Next *Upload
	Pair [2]any
	Ctx  context.Context
	Done chan struct{}
	Hook func() int
}

// Box is a generic type.
type Box[T any] struct {
	v    T
	next *Box[T]
}

// Int is an alias, embedded under its alias name.
type Int = int

type (
	IDs     []innerpkg.Key
	Handler func(int) error
	Counts  map[string]int
	Events  chan *dotpkg.Thing
	Table   [4]uint32
	Ptr     *Upload
	Level   int8
	Any     any
)

// Mixed has embedded, unexported and tagged fields.
type Mixed struct {
	innerpkg.Item
	*dotpkg.Thing
	context.Context
	Int
	a     int `note:"a,first"`
	B     string
	_     [0]func()
	inner struct {
		x, y float64
	}
	mu sync.Mutex
}

type ctxKey struct{}

func main() {
	type local struct{ x int }

	u := &Upload{Name: "u", Body: make([]byte, 16)}
	root := context.Background()
	vctx := context.WithValue(root, ctxKey{}, u)
	cctx, cancel := context.WithCancel(vctx)
	defer cancel()
	tctx, tcancel := context.WithTimeout(cctx, time.Hour)
	defer tcancel()
	wctx := context.WithoutCancel(tctx)

	types := []struct {
		label string
		t     reflect.Type
	}{
		{"valueCtx", reflect.TypeOf(vctx).Elem()},
		{"*valueCtx", reflect.TypeOf(vctx)},
		{"cancelCtx", reflect.TypeOf(cctx).Elem()},
		{"*cancelCtx", reflect.TypeOf(cctx)},
		{"timerCtx", reflect.TypeOf(tctx).Elem()},
		{"*timerCtx", reflect.TypeOf(tctx)},
		{"withoutCancelCtx", reflect.TypeOf(wctx)},
		{"backgroundCtx", reflect.TypeOf(root)},
		{"Context", reflect.TypeFor[context.Context]()},
		{"any", reflect.TypeFor[any]()},
		{"error", reflect.TypeFor[error]()},
		{"Upload", reflect.TypeFor[Upload]()},
		{"*Upload", reflect.TypeFor[*Upload]()},
		{"[]uint8", reflect.TypeFor[[]byte]()},
		{"string", reflect.TypeFor[string]()},
		{"map[string]Context", reflect.TypeFor[map[string]context.Context]()},
		{"map[Key][]*Thing", reflect.TypeFor[map[innerpkg.Key][]*dotpkg.Thing]()},
		{"map[[2]string]struct{}", reflect.TypeFor[map[[2]string]struct{}]()},
		{"Box[int]", reflect.TypeFor[Box[int]]()},
		{"Box[Item]", reflect.TypeFor[Box[innerpkg.Item]]()},
		{"*Box[*Thing]", reflect.TypeFor[*Box[*dotpkg.Thing]]()},
		{"Item", reflect.TypeFor[innerpkg.Item]()},
		{"Thing", reflect.TypeFor[dotpkg.Thing]()},
		{"Iface", reflect.TypeFor[innerpkg.Iface]()},
		{"*Impl", reflect.TypeFor[*innerpkg.Impl]()},
		{"Mixed", reflect.TypeFor[Mixed]()},
		{"struct", reflect.TypeFor[struct {
			innerpkg.Item
			a int `note:"a"`
			B *dotpkg.Thing
		}]()},
		{"struct{}", reflect.TypeFor[struct{}]()},
		{"func", reflect.TypeFor[func(context.Context, ...string) (int, error)]()},
		{"func()", reflect.TypeFor[func()]()},
		{"func(int) func() int", reflect.TypeFor[func(int) func() int]()},
		{"chan int", reflect.TypeFor[chan int]()},
		{"<-chan int", reflect.TypeFor[<-chan int]()},
		{"chan<- []byte", reflect.TypeFor[chan<- []byte]()},
		{"chan (<-chan int)", reflect.TypeFor[chan (<-chan int)]()},
		{"chan chan<- int", reflect.TypeFor[chan chan<- int]()},
		{"[3]*Item", reflect.TypeFor[[3]*innerpkg.Item]()},
		{"[0]int", reflect.TypeFor[[0]int]()},
		{"interface", reflect.TypeFor[interface {
			M(int) string
			m()
		}]()},
		{"unsafe.Pointer", reflect.TypeFor[unsafe.Pointer]()},
		{"complex128", reflect.TypeFor[complex128]()},
		{"local", reflect.TypeFor[local]()},
		{"IDs", reflect.TypeFor[IDs]()},
		{"Handler", reflect.TypeFor[Handler]()},
		{"Counts", reflect.TypeFor[Counts]()},
		{"Events", reflect.TypeFor[Events]()},
		{"Table", reflect.TypeFor[Table]()},
		{"Ptr", reflect.TypeFor[Ptr]()},
		{"Level", reflect.TypeFor[Level]()},
		{"Any", reflect.TypeFor[Any]()},
		{"Mutex", reflect.TypeFor[sync.Mutex]()},
		{"Time", reflect.TypeFor[time.Time]()},
	}
	for _, e := range types {
		t := e.t
		// A reflect.Type holding a *rtype: its data word is the
		// descriptor's address.
		addr := (*[2]uintptr)(unsafe.Pointer(&t))[1]
		fmt.Fprintf(os.Stdout, "type\t%s\t%#x\t%d\t%s\t%s\n", e.label, addr, t.Size(), t.Kind(), t)
	}
	var impl innerpkg.Iface = &innerpkg.Impl{}
	_, _ = impl.Get("k")
}
