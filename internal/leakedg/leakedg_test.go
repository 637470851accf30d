package leakedg

import (
	"io"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/leaktest"
	"github.com/ctxleak/ctxleak/internal/selfdump"
	"github.com/ctxleak/ctxleak/internal/traceback"
)

// TestParse reads headers, frames and creation sites, and skips what fits
// no shape.
func TestParse(t *testing.T) {
	stacks := "goroutine 1 [running]:\nmain.main()\n\t/m.go:3 +0x1\n\n" +
		"goroutine 21 [chan send (leaked), 3 minutes]:\nruntime.gopark(0x1)\n\t/r.go:1 +0x2\n" +
		"main.(*T).leak.func1(0xc000010000, {0x1, 0x2})\n\t/m.go:12 +0x2c\n" +
		"created by main.(*T).leak in goroutine 1\n\t/m.go:11 +0x45\n\n" +
		"goroutine 9 gp=0xc m=nil [sync.Mutex.Lock (leaked)]:\n" +
		"goroutine x [chan send (leaked)]:\n\t/stray.go:1\ngarbage\n" +
		"goroutine 4 [chan receive]:\nmain.wait()\n\t/m.go:20 +0x1\n"
	got := Parse([]byte(stacks), true)
	want := []Goroutine{
		{ID: 21, Wait: "chan send", Function: "main.(*T).leak.func1", Location: "/m.go:12",
			CreatedBy: "main.(*T).leak", CreatedAt: "/m.go:11",
			Functions: []string{"runtime.gopark", "main.(*T).leak.func1"}},
		{ID: 9, Wait: "sync.Mutex.Lock"},
	}
	if len(got) != len(want) {
		t.Fatalf("Parse: %+v, want %+v", got, want)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("goroutine %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if all := Parse([]byte(stacks), false); len(all) != 4 {
		t.Errorf("Parse of all: %d goroutines, want 4: %+v", len(all), all)
	}
}

// TestRetained leaks goroutines that each hold 16 KiB, takes a dump and
// then the profile, and finds every one of them in the dump with its
// bytes.
func TestRetained(t *testing.T) {
	if !leaktest.InChild(t) {
		return
	}
	const n, each = 30, 16 << 10
	leak(n, each)
	waitBlocked(t, n)

	d, count, err := selfdump.WriteThenProfileLeaks(t.TempDir(), "t-*.heapdump", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if count < n {
		t.Fatalf("goroutineleak profile: %d leaked, want %d", count, n)
	}
	gs, truncated := Marked()
	if len(gs) != count || truncated {
		t.Fatalf("Marked: %d goroutines (truncated %v), the profile counts %d", len(gs), truncated, count)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := binsym.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	a, err := heap.Analyze(d.Path, bin)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	matched, total := Retained(a, gs)
	if matched != len(gs) || total < n*each {
		t.Errorf("Retained: %d of %d in the dump, %d bytes, want all and at least %d", matched, len(gs), total, n*each)
	}
	for _, g := range gs {
		if !strings.HasPrefix(g.Function, "github.com/ctxleak/ctxleak/internal/leakedg.leak") || g.Wait != "chan send" ||
			g.CreatedBy != "github.com/ctxleak/ctxleak/internal/leakedg.leak" || !g.InDump || g.Retained < each {
			t.Errorf("goroutine %+v: want leak's, in chan send, in the dump, retaining %d bytes", g, each)
		}
	}
}

// leak starts n goroutines, each blocked for ever sending on a channel no
// one else has while it holds size bytes.
func leak(n, size int) {
	for range n {
		ch := make(chan int)
		go func() {
			b := payload(size)
			ch <- len(b)
			runtime.KeepAlive(b)
		}()
	}
}

// payload returns n bytes on the heap: a make of a size the compiler
// knows could be on the goroutine's stack, which no heap dump counts.
//
//go:noinline
func payload(n int) []byte { return make([]byte, n) }

// waitBlocked waits, with back-off, until n goroutines are blocked in
// chan send.
func waitBlocked(t *testing.T, n int) {
	t.Helper()
	for wait := time.Millisecond; ; wait *= 2 {
		c := 0
		for _, g := range Parse(mustStacks(), false) {
			if g.Wait == "chan send" {
				c++
			}
		}
		if c >= n {
			return
		}
		if wait > 5*time.Second {
			t.Fatalf("%d goroutines in chan send, want %d", c, n)
		}
		time.Sleep(wait)
	}
}

func mustStacks() []byte {
	b, _ := traceback.All(maxStacks)
	return b
}
