package heap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// stackObjectGroup returns the report's only group held by frames of fn,
// failing the test when there is none or more than one.
func stackObjectGroup(t *testing.T, rep *Report, fn string) *Group {
	t.Helper()
	var found []*Group
	for _, g := range rep.Groups {
		if g.Root.Function == fn {
			found = append(found, g)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d groups held by %s, want 1:\n%s", len(found), fn, reportText(t, rep))
	}
	return found[0]
}

// Goroutines blocked for ever in `ch <- v`, with nothing after the send:
// v (a struct holding a 4 KiB buffer) is an address-taken local, a stack
// object, which the dump's frame slots leave out. runtime.chansend keeps a
// pointer to it, and the garbage collector keeps the buffer alive: so must
// the report, naming the frame and the variable.
func TestHoldersStackObject(t *testing.T) {
	t.Parallel()
	const n, value = 40, 4 << 10
	r := runPile(t, "stackobj", n)
	a := r.analyze(t)
	if v, ok := a.Graph().Find(r.PayloadAddr); !ok || !a.Graph().Live(v) {
		t.Fatalf("the buffer at %#x is not a live object (found %v)", r.PayloadAddr, ok)
	}
	rep, err := a.Holders(MinSize(64 << 10))
	if err != nil {
		t.Fatal(err)
	}
	g := stackObjectGroup(t, rep, "main.send")
	if g.Root.Kind != heapdump.RootFrame || g.GoroutineCount != n || g.Count != n {
		t.Errorf("holder %+v of %d objects in %d goroutines, want frames of main.send in %d goroutines", g.Root, g.Count, g.GoroutineCount, n)
	}
	if g.RetainedBytes != n*value || g.EachMinBytes != value || g.EachMaxBytes != value {
		t.Errorf("retained %d bytes, %d to %d each: want %d buffers of %d bytes", g.RetainedBytes, g.EachMinBytes, g.EachMaxBytes, n, value)
	}
	if len(g.Path) != 1 || g.Path[0].Via != "local v.buf (stack object)" || g.Path[0].Type != "[]uint8" {
		t.Errorf("path %+v, want one step: local v.buf (stack object) -> []uint8", g.Path)
	}
	text := reportText(t, rep)
	for _, want := range []string{
		"40 goroutines in main.send (created at main.sendPile piles/stackobj.go:",
		fmt.Sprintf(") hold %s: 40 x []uint8 of 4.0 KiB", bytesize.Format(n*value)),
		"frame main.send (piles/stackobj.go:",
		"`- local v.buf (stack object) -> []uint8    4.0 KiB",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}

// The same goroutines sending a value that holds nothing: no holder in
// main.send.
func TestHoldersStackObjectClean(t *testing.T) {
	t.Parallel()
	a := runPile(t, "stackobj-clean", 40).analyze(t)
	rep, err := a.Holders(MinSize(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		if g.Root.Function == "main.send" {
			t.Errorf("false holder: %+v\n%s", g.Root, reportText(t, rep))
		}
	}
}

// A small struct is copied to a compiler's temporary before the send, in
// a send statement or a select: the temporary is the stack object, which
// DWARF does not name; the channel that runtime.chansend or
// runtime.selectgo is sending on gives its type.
func TestHoldersStackObjectTemporary(t *testing.T) {
	t.Parallel()
	const n, value = 40, 4 << 10
	a := runPile(t, "stackobj-temp", n).analyze(t)
	rep, err := a.Holders(MinSize(64 << 10))
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"main.sendPair", "main.selectPair"} {
		g := stackObjectGroup(t, rep, fn)
		if g.RetainedBytes != n*value || g.GoroutineCount != n {
			t.Errorf("%s: %d goroutines retain %d bytes, want %d retaining %d", fn, g.GoroutineCount, g.RetainedBytes, n, n*value)
		}
		if len(g.Path) != 1 || !strings.HasPrefix(g.Path[0].Via, "value sent main.pair.buf (stack object at +") || g.Path[0].Type != "[]uint8" {
			t.Errorf("%s: path %+v, want one step: value sent main.pair.buf (stack object at +N) -> []uint8", fn, g.Path)
		}
	}
}
