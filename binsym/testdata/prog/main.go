// Command prog is a test program for package binsym. It prints, one fact a
// line, addresses that it computes about itself (function PCs, a closure's
// code pointer, globals, type descriptors and itabs), so that the test can
// compare what binsym reads from the executable with what the running
// program saw. With -dump FILE it also writes a heap dump while a goroutine
// is blocked in a callee that still uses its ctx argument.
//
// Output lines are "kind key value..." separated by tabs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"time"
	"unsafe"
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

type ctxKey struct{}

// Globals in the four data segments.
var (
	cache    = map[string]*Upload{}  // .bss (initialised at run time)
	current  *Upload                 // .bss
	greeting = &Upload{Name: "hi"}   // .data or .bss
	counter  int64                   // .noptrbss
	table    = [4]uint32{1, 2, 3, 4} // .noptrdata
	holder   = struct {
		ctx  context.Context
		name string
	}{}
)

var out = os.Stdout

func emit(kind string, args ...any) {
	fmt.Fprint(out, kind)
	for _, a := range args {
		switch a := a.(type) {
		case uintptr:
			fmt.Fprintf(out, "\t%#x", a)
		default:
			fmt.Fprintf(out, "\t%v", a)
		}
	}
	fmt.Fprintln(out)
}

// words returns the two words of an interface value.
func words(p unsafe.Pointer) (uintptr, uintptr) {
	w := (*[2]uintptr)(p)
	return w[0], w[1]
}

// typeAddr returns the address of t's runtime type descriptor.
func typeAddr(t reflect.Type) uintptr {
	_, data := words(unsafe.Pointer(&t))
	return data
}

//go:noinline
func work() uintptr {
	pcs := make([]uintptr, 1)
	runtime.Callers(1, pcs)
	return pcs[0]
}

// emitPC prints a return PC and what the runtime says about it.
func emitPC(key string, pc uintptr) {
	fr, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	f := runtime.FuncForPC(pc - 1)
	emit("pc", key, pc, f.Entry(), fr.Function, fr.File, fr.Line)
}

// callers returns the return PCs of its caller's logical frames: after
// runtime.Callers, inlining is undone.
//
//go:noinline
func callers() [2]uintptr {
	var pcs [2]uintptr
	runtime.Callers(2, pcs[:])
	return pcs
}

// inner is inlined into outer.
func inner() [2]uintptr { return callers() }

//go:noinline
func outer() [2]uintptr { return inner() }

// emitFrames prints the return PC of a physical frame that holds inlined
// code and the logical frames the runtime made of it: runtime.Callers
// expands inlining, so pcs are the innermost frame's and its caller's.
func emitFrames(key string, pcs [2]uintptr) {
	args := []any{key, pcs[0]}
	frames := runtime.CallersFrames(pcs[:])
	for {
		fr, more := frames.Next()
		args = append(args, fr.Function, fr.File, fr.Line)
		if !more {
			break
		}
	}
	emit("frames", args...)
}

//go:noinline
func scheduleRetry(u *Upload) func() int {
	return func() int { return len(u.Body) }
}

// tally's closure captures n by reference.
//
//go:noinline
func tally() func() int {
	n := 0
	return func() int { n++; return n }
}

// wait blocks until ch is closed and still uses ctx afterwards, so ctx is
// live (spilled) while it blocks.
//
//go:noinline
func wait(ctx context.Context, ch chan struct{}, n int) int {
	<-ch
	return len(ctx.Value(ctxKey{}).(*Upload).Body) + n
}

//go:noinline
func caller(ctx context.Context, ch chan struct{}, done chan int) {
	done <- wait(ctx, ch, 1)
}

// pinned is the type of addrTaken's stack object.
type pinned struct {
	u   *Upload
	n   int
	ctx context.Context
}

// addrTaken's local v is address-taken and does not escape: a stack object
// of 32 bytes with pointers at 0 and 24 (the interface's data word; its type
// word is not a pointer to the garbage collector).
//
//go:noinline
func addrTaken(u *Upload) int {
	v := pinned{u: u, n: 1, ctx: context.Background()}
	return count(&v)
}

//go:noinline
func count(p *pinned) int { return p.n + len(p.u.Name) }

func main() {
	dump := flag.String("dump", "", "write a heap dump to `file`")
	flag.Parse()

	emitPC("main.work", work())
	emitFrames("main.outer", outer())

	u := &Upload{Name: "u", Body: make([]byte, 1<<20)}
	current = u
	cache["u"] = u
	counter++
	holder.name = "h"
	counter += int64(addrTaken(u))

	f := scheduleRetry(u)
	fv := *(*unsafe.Pointer)(unsafe.Pointer(&f))
	code := *(*uintptr)(fv)
	emit("closure", runtime.FuncForPC(code).Name(), code)
	c := tally()
	code = **(**uintptr)(unsafe.Pointer(&c))
	emit("closure", runtime.FuncForPC(code).Name(), code)
	emit("funcentry", "main.wait", reflect.ValueOf(wait).Pointer())
	emit("funcentry", "main.caller", reflect.ValueOf(caller).Pointer())

	emit("global", "main.cache", uintptr(unsafe.Pointer(&cache)), unsafe.Sizeof(cache))
	emit("global", "main.current", uintptr(unsafe.Pointer(&current)), unsafe.Sizeof(current))
	emit("global", "main.greeting", uintptr(unsafe.Pointer(&greeting)), unsafe.Sizeof(greeting))
	emit("global", "main.counter", uintptr(unsafe.Pointer(&counter)), unsafe.Sizeof(counter))
	emit("global", "main.table", uintptr(unsafe.Pointer(&table)), unsafe.Sizeof(table))
	emit("global", "main.holder", uintptr(unsafe.Pointer(&holder)), unsafe.Sizeof(holder))

	root := context.Background()
	vctx := context.WithValue(root, ctxKey{}, u)
	cctx, cancel := context.WithCancel(vctx)
	defer cancel()
	tctx, tcancel := context.WithTimeout(cctx, time.Hour)
	defer tcancel()
	wctx := context.WithoutCancel(tctx)
	holder.ctx = wctx

	// Dynamic types as a Context interface's itab shows them.
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{
		{"*context.valueCtx", vctx},
		{"*context.cancelCtx", cctx},
		{"*context.timerCtx", tctx},
		{"context.withoutCancelCtx", wctx},
		{"context.backgroundCtx", root},
	} {
		itab, data := words(unsafe.Pointer(&c.ctx))
		typ := *(*uintptr)(unsafe.Pointer(itab + unsafe.Sizeof(uintptr(0))))
		emit("itab", c.name, itab, typ, data)
	}

	// Type descriptors as reflect sees them.
	for _, t := range []reflect.Type{
		reflect.TypeOf(vctx).Elem(),
		reflect.TypeOf(vctx),
		reflect.TypeOf(cctx).Elem(),
		reflect.TypeOf(cctx),
		reflect.TypeOf(tctx).Elem(),
		reflect.TypeOf(wctx),
		reflect.TypeOf([]byte(nil)),
		reflect.TypeOf(map[string]context.Context(nil)),
		reflect.TypeOf(Upload{}),
		reflect.TypeOf(u),
		reflect.TypeOf(""),
		reflect.TypeOf(f),
		reflect.TypeOf(u.Done),
		reflect.TypeOf([4]uint32{}),
		reflect.TypeOf((*context.Context)(nil)).Elem(),
		reflect.TypeOf((*any)(nil)).Elem(),
	} {
		emit("type", t.String(), typeAddr(t), t.Size(), t.Kind())
	}

	// An empty interface's first word is the type descriptor.
	var e any = u
	typ, _ := words(unsafe.Pointer(&e))
	emit("eface", "*main.Upload", typ)

	if *dump != "" {
		ch := make(chan struct{})
		done := make(chan int)
		go caller(vctx, ch, done)
		// Wait until the goroutine is blocked in wait: poll with back-off.
		for d := time.Microsecond; ; d *= 2 {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			if containsBlocked(string(buf[:n])) {
				break
			}
			time.Sleep(min(d, 10*time.Millisecond))
		}
		_, vdata := words(unsafe.Pointer(&vctx))
		emit("ctxdata", "main.wait", vdata)
		fd, err := os.OpenFile(*dump, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		debug.WriteHeapDump(fd.Fd())
		if err := fd.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		close(ch)
		<-done
	}
	runtime.KeepAlive(f)
	runtime.KeepAlive(c)
	runtime.KeepAlive(u)
}

// containsBlocked reports whether a goroutine is parked in main.wait.
func containsBlocked(stacks string) bool {
	const recv = "[chan receive]:\nmain.wait("
	for i := 0; i+len(recv) <= len(stacks); i++ {
		if stacks[i:i+len(recv)] == recv {
			return true
		}
	}
	return false
}
