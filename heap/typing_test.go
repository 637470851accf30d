package heap

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/dumptest"
	"github.com/ctxleak/ctxleak/internal/testbuild"
)

// The typing tests run testdata/piles patterns of typing.go (statics,
// containers, finalizers, interior pointers) and check that the holder is
// named and the path typed. Each pattern holds typingN items of about 4 KiB.

const (
	typingN    = 200
	typingItem = 4 << 10
)

// typingReport runs pattern and returns its report with a MinSize that
// the pattern's items together pass, and its text.
func typingReport(t *testing.T, pattern string) (*Report, string, *pileRun) {
	t.Helper()
	r := runPile(t, pattern, typingN)
	rep, err := r.analyze(t).Holders(MinSize(typingN * typingItem / 2))
	if err != nil {
		t.Fatal(err)
	}
	return rep, reportText(t, rep), r
}

// typingGroup is typingReport for a pattern whose report has one group:
// it returns that group.
func typingGroup(t *testing.T, pattern string) (*Group, string, *pileRun) {
	t.Helper()
	rep, text, r := typingReport(t, pattern)
	if len(rep.Groups) != 1 {
		t.Fatalf("%d groups, want 1:\n%s", len(rep.Groups), text)
	}
	return rep.Groups[0], text, r
}

// checkRetains fails unless g retains the n items and little more.
func checkRetains(t *testing.T, g *Group, n int) {
	t.Helper()
	if g.RetainedBytes < uint64(n*typingItem) || g.RetainedBytes > uint64(n*(typingItem+512)) {
		t.Errorf("group retains %d bytes, want %d items of %d bytes and a little more", g.RetainedBytes, n, typingItem)
	}
}

// pathString is a group's path as "via>type" steps joined by " ".
func pathString(steps []Step) string {
	var b []string
	for _, s := range steps {
		b = append(b, s.Via+">"+s.Type)
	}
	return strings.Join(b, " ")
}

// checkTyped fails when a step of the path has no type or an offset as via.
func checkTyped(t *testing.T, steps []Step) {
	t.Helper()
	for _, s := range steps {
		if s.Type == "" || strings.HasPrefix(s.Via, "+") || strings.Contains(s.Via, "?") {
			t.Errorf("untyped step %q > %q in %s", s.Via, s.Type, pathString(steps))
		}
	}
}

// A value the linker allocated (var x = &T{}, or behind an interface as
// net/http.DefaultTransport) is named after the global that points to it
// and typed as what it points to.
func TestHoldersStatic(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pattern, global, addr, typ, via string
	}{
		{"static", "main.defaultStore", "store", "main.store", ".items"},
		{"static-iface", "main.defaultSink", "sink", "main.fileSink", ".pending"},
		{"static-moved", "main.defaultStore", "store", "main.store", ".items"},
	} {
		t.Run(tt.pattern, func(t *testing.T) {
			g, text, r := typingGroup(t, tt.pattern)
			if g.Root.Kind != heapdump.RootGlobal || g.Root.Global != tt.global {
				t.Errorf("held by %+v, want global %s", g.Root, tt.global)
			}
			verb := "points"
			if tt.pattern == "static-moved" {
				verb = "pointed when the program started"
			}
			want := fmt.Sprintf("held by global %s (the %s it %s to, allocated statically in the data segment)", tt.global, tt.typ, verb)
			if !strings.Contains(text, want) {
				t.Errorf("no %q in\n%s", want, text)
			}
			if got := pathString(g.Path); got != tt.via+">[]*main.item" {
				t.Errorf("path %s, want %s>[]*main.item", got, tt.via)
			}
			if r.Addrs[tt.addr] == 0 {
				t.Errorf("the pattern printed no address of %s", tt.addr)
			}
			checkRetains(t, g, typingN)
		})
	}
}

// Items in a sync.Pool are held by the pool's global through its victim
// cache (the dump follows a GC), typed down to the item: the array of
// per-P pools, its private slot or its shared queue's entries.
func TestHoldersSyncPool(t *testing.T) {
	t.Parallel()
	g, _, r := typingGroup(t, "pool")
	if g.Root.Global != "main.bufPool" || pathString(g.Path) != ".victim>[1]sync.poolLocal" {
		t.Errorf("held by %q through %s, want main.bufPool through .victim>[1]sync.poolLocal", g.Root.Global, pathString(g.Path))
	}
	checkTyped(t, g.Inside)
	checkRetains(t, g, typingN)
	// The last item put is in the shared queue: a []sync.eface's val.
	a := r.analyze(t)
	held, err := a.Explain([]uint64{r.Addrs["last_buf"]})
	if err != nil {
		t.Fatal(err)
	}
	if held[0] == nil {
		t.Fatal("the last item's buffer is not held")
	}
	got := pathString(held[0].Path)
	want := ".victim>[1]sync.poolLocal [0].poolLocalInternal.shared.head>sync.poolChainElt .poolDequeue.vals>[]sync.eface"
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, ".val>main.item .buf>[]uint8") {
		t.Errorf("path %s, want %s ... .val>main.item .buf>[]uint8", got, want)
	}
	checkTyped(t, held[0].Path)
}

// Items in a sync.Map (a hash-trie map since Go 1.24) are typed through
// its nodes, and the entry that holds each says its key.
func TestHoldersSyncMap(t *testing.T) {
	t.Parallel()
	rep, text, r := typingReport(t, "syncmap")
	checkTrie(t, rep, text, r.analyze(t), "main.sessions", 1000)
}

// Values behind runtime/cgo handles never deleted are held by the
// runtime's hash-trie of handles; the entry says the handle's number.
func TestHoldersCgoHandles(t *testing.T) {
	t.Parallel()
	a, r := runCgoPile(t, "cgo-handles", typingN)
	rep, err := a.Holders(MinSize(typingN * typingItem / 2))
	if err != nil {
		t.Fatal(err)
	}
	if r.Addrs["last_handle"] != typingN {
		t.Errorf("the last handle is %d, want %d", r.Addrs["last_handle"], typingN)
	}
	checkTrie(t, rep, reportText(t, rep), a, "runtime/cgo.handles", 1)
}

// Items in a map with integer keys: the slot's value says its key.
func TestHoldersMapKeys(t *testing.T) {
	t.Parallel()
	g, _, r := typingGroup(t, "intmap")
	if g.Root.Global != "main.byID" {
		t.Errorf("held by %+v, want main.byID", g.Root)
	}
	checkRetains(t, g, typingN)
	checkTyped(t, g.Inside)
	in := g.Inside
	if len(in) < 2 || in[len(in)-2].Type != "main.item" {
		t.Fatalf("path inside %s, want ... main.item > .buf", pathString(in))
	}
	checkKey(t, r.analyze(t), in[len(in)-2].Key, in[len(in)-2], 5000)
}

// checkKey checks that key, the key of the map entry holding item (a
// main.item step), is the item's id plus keyBase (main.item's id is its
// first word), and returns it.
func checkKey(t *testing.T, a *Analysis, key string, item Step, keyBase int) int {
	t.Helper()
	k, err := strconv.Atoi(key)
	if err != nil {
		t.Fatalf("key %q of the entry of %s: %v", key, item.Type, err)
	}
	addr, err := strconv.ParseUint(item.Addr, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := a.g.Find(addr)
	rec, err := a.g.ObjectRecord(v, 8)
	if err != nil {
		t.Fatal(err)
	}
	if id := int(rec.Word(0)); k != id+keyBase {
		t.Errorf("key %d for item %d, want %d", k, id, id+keyBase)
	}
	return k
}

// checkTrie checks the report of a program that keeps typingN items in the
// hash-trie map of global, item i under the integer key i+keyBase.
func checkTrie(t *testing.T, rep *Report, text string, a *Analysis, global string, keyBase int) {
	t.Helper()
	const indirect, entry = "internal/sync.indirect[interface {},interface {}]", "internal/sync.entry[interface {},interface {}]"
	if len(rep.Groups) != 1 {
		t.Fatalf("%d groups, want 1:\n%s", len(rep.Groups), text)
	}
	g := rep.Groups[0]
	if g.Root.Global != global || pathString(g.Path) != ".m.root.v>"+indirect {
		t.Errorf("held by %q through %s, want %s through .m.root.v>%s", g.Root.Global, pathString(g.Path), global, indirect)
	}
	checkRetains(t, g, typingN)
	checkTyped(t, g.Inside)
	in := g.Inside
	if len(in) < 3 || in[len(in)-3].Type != entry || in[len(in)-2].Via != ".value" || in[len(in)-2].Type != "main.item" {
		t.Fatalf("path inside %s, want ... %s > .value main.item > .buf", pathString(in), entry)
	}
	// The key is the item's.
	key := checkKey(t, a, in[len(in)-3].Key, in[len(in)-2], keyBase)
	if want := fmt.Sprintf("%s (key %d)", entry, key); !strings.Contains(text, want) {
		t.Errorf("no %q in\n%s", want, text)
	}
}

var (
	cgoPilesOnce sync.Once
	cgoPilesExe  string
	cgoPilesErr  error
)

// runCgoPile runs pattern of testdata/piles built with the tag pilescgo,
// which makes it a cgo program, and analyses its dump. It skips the test
// when cgo is off (no C compiler).
func runCgoPile(t *testing.T, pattern string, n int) (*Analysis, *pileRun) {
	t.Helper()
	dir := dumptest.TempDir(t)
	cgoPilesOnce.Do(func() {
		out, err := exec.Command("go", "env", "CGO_ENABLED").Output()
		if err != nil || strings.TrimSpace(string(out)) != "1" {
			cgoPilesErr = errNoCgo
			return
		}
		cgoPilesExe = filepath.Join(dir, "piles-cgo")
		if out, err := testbuild.Build(cgoPilesExe, nil, "-tags", "pilescgo", "./testdata/piles"); err != nil {
			cgoPilesErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if cgoPilesErr == errNoCgo {
		t.Skip("cgo is off (no C compiler): runtime/cgo handles cannot be built")
	}
	if cgoPilesErr != nil {
		t.Fatal(cgoPilesErr)
	}
	// Each call writes a dump of its own: go test -count=2 calls again.
	dump := filepath.Join(t.TempDir(), fmt.Sprintf("piles-cgo-%s-%d.dump", pattern, n))
	out, err := exec.Command(cgoPilesExe, pattern, fmt.Sprint(n), dump).Output()
	if err != nil {
		t.Fatalf("piles %s %d: %v", pattern, n, err)
	}
	r := &pileRun{dump: dump}
	if err := json.Unmarshal(out, r); err != nil {
		t.Fatalf("piles %s printed %q: %v", pattern, out, err)
	}
	a, err := Analyze(r.dump, openShared(t, cgoPilesExe))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, r
}

var errNoCgo = errors.New("cgo is off")

// Objects with a finalizer on a cycle (object -> peer -> object) are never
// freed: the finalizer holds them, typed from its record, and the report
// says the finalizer can never run.
func TestHoldersFinalizerCycle(t *testing.T) {
	t.Parallel()
	g, text, _ := typingGroup(t, "finalizer-cycle")
	if g.Root.Kind != heapdump.RootFinalizer || g.Root.Detail != DetailFinalizerCycle || g.Shared {
		t.Errorf("held by %+v (shared %v), want a finalizer that can never run", g.Root, g.Shared)
	}
	if pathString(g.Path) != "object>main.finalized" || g.Count != typingN {
		t.Errorf("%d x path %s, want %d x object>main.finalized", g.Count, pathString(g.Path), typingN)
	}
	checkRetains(t, g, typingN)
	if want := "(" + DetailFinalizerCycle + ")"; !strings.Contains(text, want) {
		t.Errorf("no %q in\n%s", want, text)
	}
	js, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"detail":"` + DetailFinalizerCycle + `"`; !strings.Contains(string(js), want) {
		t.Errorf("no %s in the JSON report", want)
	}
}

// Objects with a finalizer that a global holds, on no cycle: the global
// holds them, and no finalizer is said never to run.
var finalizedPath = regexp.MustCompile(`^\(the variable\)>\[\]\*main\.finalized \[\d+\]>main\.finalized$`)

func TestHoldersFinalizerClean(t *testing.T) {
	t.Parallel()
	g, text, _ := typingGroup(t, "finalizer")
	if g.Root.Kind != heapdump.RootGlobal || g.Root.Global != "main.kept" {
		t.Errorf("held by %+v, want global main.kept", g.Root)
	}
	// The example is any one of the alike members: which one follows the
	// addresses the allocator gave them, which a collection during the
	// program's loop reorders.
	if got := pathString(g.Path); !finalizedPath.MatchString(got) {
		t.Errorf("path %s, want %s", got, finalizedPath)
	}
	if strings.Contains(text, DetailFinalizerCycle) {
		t.Errorf("a finalizer said never to run:\n%s", text)
	}
	checkRetains(t, g, typingN)
}

// A goroutine that holds a pointer to a field in the middle of an object
// (&c.state) holds the object: the argument is typed from DWARF, the
// object typed as the struct that has such a field there, and the path
// goes on from its fields.
func TestHoldersInteriorPointer(t *testing.T) {
	t.Parallel()
	g, text, _ := typingGroup(t, "interior")
	if g.Root.Kind != heapdump.RootFrame || g.Root.Function != "main.holdField" || g.GoroutineCount != typingN {
		t.Errorf("held by %+v (%d goroutines), want %d goroutines in main.holdField", g.Root, g.GoroutineCount, typingN)
	}
	if got, want := pathString(g.Path), "argument (points to .state)>main.conn"; got != want {
		t.Errorf("path %s, want %s", got, want)
	}
	if got := pathString(g.Inside); got != ".buf>[]uint8" {
		t.Errorf("path inside %s, want .buf>[]uint8", got)
	}
	checkRetains(t, g, typingN)
	if want := "argument (points to .state) -> main.conn"; !strings.Contains(text, want) {
		t.Errorf("no %q in\n%s", want, text)
	}
}

// The same containers and goroutines, once they let go of their items,
// hold nothing: no group.
func TestHoldersTypingClean(t *testing.T) {
	t.Parallel()
	rep, text, _ := typingReport(t, "typing-clean")
	if len(rep.Groups) != 0 {
		t.Errorf("%d groups in a clean program:\n%s", len(rep.Groups), text)
	}
}
