package heap

import (
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

// The real-world tests run the combined patterns of
// testdata/piles/realworld.go (built with the tag pilesreal), reproductions of retention bugs real Go
// projects reported, several to a program and a dump, and check that each
// holder is named, its path typed and what it retains counted. Each
// reproduction holds rwN contexts or items of about 4 KiB.

const rwN = 50

// rwReport runs the combined pattern and returns its report at a MinSize
// half of what one reproduction holds, and its text.
func rwReport(t *testing.T, pattern string) (*Report, string) {
	t.Helper()
	rep, err := rwAnalyze(t, pattern).Holders()
	if err != nil {
		t.Fatal(err)
	}
	return rep, reportText(t, rep)
}

// rwAnalyze runs the combined pattern and analyses its dump with the
// MinSize of rwReport, which the analysis's warnings use too.
func rwAnalyze(t *testing.T, pattern string) *Analysis {
	t.Helper()
	exe := realPiles(t)
	dump := filepath.Join(t.TempDir(), fmt.Sprintf("piles-real-%s-%d.dump", pattern, rwN))
	if out, err := exec.Command(exe, pattern, fmt.Sprint(rwN), dump).CombinedOutput(); err != nil {
		t.Fatalf("piles %s %d: %v\n%s", pattern, rwN, err, out)
	}
	a, err := Analyze(dump, openShared(t, exe), MinSize(rwN*typingItem/2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

var (
	realPilesOnce sync.Once
	realPilesExe  string
	realPilesErr  error
	realPilesCgo  bool
)

// realPiles builds testdata/piles with the tag pilesreal, once per test
// binary: with cgo when it is on, which adds the pattern rw-cgo.
func realPiles(t testing.TB) string {
	t.Helper()
	dir := dumptest.TempDir(t)
	realPilesOnce.Do(func() {
		out, err := exec.Command("go", "env", "CGO_ENABLED").Output()
		realPilesCgo = err == nil && strings.TrimSpace(string(out)) == "1"
		realPilesExe = filepath.Join(dir, "piles-real")
		if out, err := testbuild.Build(realPilesExe, nil, "-tags", "pilesreal", "./testdata/piles"); err != nil {
			realPilesErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if realPilesErr != nil {
		t.Fatal(realPilesErr)
	}
	return realPilesExe
}

// rwWant is what one reproduction's group must be.
type rwWant struct {
	kind heapdump.RootKind
	// holder matches the group's Root.Function or Root.Global.
	holder string
	// path is the group's path (pathString); inside is in pathString of
	// its Inside; key is the key of a step of Inside.
	path, inside, key string
	// count is the objects of the group (1 when 0); perGoroutine says one
	// goroutine holds each.
	count        int
	perGoroutine bool
	// min and max bound the bytes the group retains.
	min, max uint64
	// untyped allows steps without a type (see realworld.go: a
	// compiler's temporary in net/http's frames).
	untyped bool
}

// rwGroups returns the groups of rep held by w's holder.
func rwGroups(rep *Report, w rwWant) []*Group {
	re := regexp.MustCompile("^(?:" + w.holder + ")$")
	var out []*Group
	for _, g := range rep.Groups {
		if g.Root.Kind == w.kind && (re.MatchString(g.Root.Function) || re.MatchString(g.Root.Global)) {
			out = append(out, g)
		}
	}
	return out
}

// checkRW checks each reproduction's group in rep.
func checkRW(t *testing.T, rep *Report, text string, wants []rwWant) {
	t.Helper()
	for _, w := range wants {
		t.Run(strings.NewReplacer("/", "_", " ", "_").Replace(w.holder+"_"+w.path), func(t *testing.T) {
			var g *Group
			for _, c := range rwGroups(rep, w) {
				// Any element: the first member of a group may be any.
				if w.path == "" || anyIndex.ReplaceAllString(pathString(c.Path), "[i]") == anyIndex.ReplaceAllString(w.path, "[i]") {
					g = c
				}
			}
			if g == nil {
				t.Fatalf("no group held by %s %s with path %q:\n%s", w.kind, w.holder, w.path, text)
			}
			count := max(w.count, 1)
			if g.Count != count {
				t.Errorf("%d objects, want %d", g.Count, count)
			}
			if g.Root.Kind == heapdump.RootFrame && strings.HasPrefix(g.Root.Function, "main.") &&
				(g.Root.Location == nil || !strings.HasPrefix(filepath.Base(g.Root.Location.File), "realworld")) {
				// The line in the function itself, not in code inlined
				// into it (sync.(*Mutex).Lock).
				t.Errorf("holder at %+v, want a line of piles/realworld*.go", g.Root.Location)
			}
			if w.perGoroutine && g.GoroutineCount != count {
				t.Errorf("%d goroutines, want %d", g.GoroutineCount, count)
			}
			if g.RetainedBytes < w.min || g.RetainedBytes > w.max {
				t.Errorf("retains %d bytes, want %d to %d", g.RetainedBytes, w.min, w.max)
			}
			if w.inside != "" && !strings.Contains(pathString(g.Inside), w.inside) {
				t.Errorf("inside %s, want %s in it", pathString(g.Inside), w.inside)
			}
			if w.key != "" && !hasKey(g.Inside, w.key) {
				t.Errorf("no key %s… in %+v", w.key, g.Inside)
			}
			if !w.untyped {
				checkTyped(t, g.Path)
				checkTyped(t, g.Inside)
			}
		})
	}
}

// hasKey reports whether a step's key starts with prefix.
func hasKey(steps []Step, prefix string) bool {
	for _, s := range steps {
		if strings.HasPrefix(s.Key, prefix) {
			return true
		}
	}
	return false
}

// each bounds what rwN reproductions of about 4 KiB and extra bytes each
// retain.
func each(extra uint64) (uint64, uint64) {
	return rwN * typingItem, rwN * (typingItem + extra)
}

// Globals, containers, statics, closures and timers of one program.
func TestHoldersRealWorldGlobals(t *testing.T) {
	t.Parallel()
	a := rwAnalyze(t, "rw-globals")
	rep, err := a.Holders()
	if err != nil {
		t.Fatal(err)
	}
	text := reportText(t, rep)
	lo, hi := each(700)
	g := func(holder, path, inside string) rwWant {
		return rwWant{kind: heapdump.RootGlobal, holder: regexp.QuoteMeta(holder), path: path, inside: inside, min: lo, max: hi}
	}
	wants := []rwWant{
		g("main.queue", "(the variable)>hchan<*main.request>", ".buf>[]*main.request [0]>main.request .ctx>context.valueCtx"),
		g("main.hooks", "(the variable)>[]func()", "[0]>closure main.addHook.func1 .ctx>context.valueCtx"),
		g("main.onEvent", "(the variable)>[]func()", "[0]>closure main.(*server).handle-fm .receiver>main.server .ctx>context.valueCtx"),
		g("main.loggers", "(the variable)>[]*log/slog.Logger", ".attrs>[]log/slog.Attr [0].Value.any>context.valueCtx"),
		g("main.handles", "(the variable)>[]unique.Handle[main.itemKey]", "[0].value>main.itemKey .it>main.item"),
		g("main.current", "(the variable)>[]interface {}", "[0]>main.item .buf>[]uint8"),
		g("main.registry", ".items>[]*main.item", "[0]>main.item .buf>[]uint8"),
		g("main.loadItems", "", ".result>[]*main.item"),
		g("main.bufs", ".victim>[1]sync.poolLocal", ">bytes.Buffer .buf>[]uint8"),
	}
	byName := g("main.byName", "(the variable)>map[string]context.Context", ".elem>context.valueCtx")
	byName.key = `a string of `
	cache := g("main.itemCache", "(the variable)>main.genCache[string,*main.item]", ".elem>main.item")
	cache.key = `a string of `
	tenants := g("main.tenants", "", ".value>context.valueCtx")
	tenants.key = `a string of `
	// errgroup-like groups never waited for: the long-lived parent's
	// children map (its cancel function shares it).
	errgroup := rwWant{kind: heapdump.RootGlobal, holder: `main\.(appCtx|stopApp)`, inside: ".Context>context.valueCtx", min: lo, max: hi}
	// Finalizers whose closures use a context.
	fin := rwWant{kind: heapdump.RootFinalizer, holder: `main\.init\.\d+\.func\d+\.1`, inside: ".ctx>context.valueCtx", count: rwN, min: lo, max: hi}
	wants = append(wants, byName, cache, tenants, errgroup, fin)
	// At most 64 slots, each holding an item and a context.
	const nSlots = min(rwN, 64)
	slots := rwWant{kind: heapdump.RootGlobal, holder: `main\.slots`, count: nSlots, min: nSlots * typingItem, max: nSlots * (typingItem + 700)}
	ctxSlot, itemSlot := slots, slots
	ctxSlot.path, itemSlot.path = "[0].ctx>context.valueCtx", "[0].it>main.item"
	// One buffer of what encoding/json wrote: rwN strings of 4 KiB, in a
	// buffer that grew by doubling.
	jsonPool := rwWant{kind: heapdump.RootGlobal, holder: `encoding/json\.encodeStatePool`,
		path: ".victim>[1]sync.poolLocal [0].poolLocalInternal.private>encoding/json.encodeState .Buffer.buf>[]uint8",
		min:  rwN * typingItem, max: 2 * rwN * (typingItem + 8)}
	if goMinor(rep.GoVersion) >= 27 { // encoding/json is encoding/json/v2's, which pools jsontext's encoders
		jsonPool.holder = `encoding/json/jsontext\.bufferedEncoderPool`
		jsonPool.path = ".victim>[1]sync.poolLocal [0].poolLocalInternal.private>encoding/json/jsontext.Encoder .s.encodeBuffer.Buf>[]uint8"
	}
	timers := rwWant{kind: heapdump.RootTimer, holder: `main\.init\.\d+\.func\d+\.1`, inside: ".ctx>context.valueCtx", count: rwN, min: lo, max: hi}
	wants = append(wants, ctxSlot, itemSlot, jsonPool, timers)
	checkRW(t, rep, text, wants)
	checkHeldBy(t, rep)

	t.Run("text", func(t *testing.T) {
		for _, want := range []string{
			"held by global main.registry (the main.config its value's .cfg points to, allocated statically in the data segment)",
			fmt.Sprintf(" %d timers that will run main.init.", rwN),
			`(key a string of `,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("no %q in\n%s", want, text)
			}
		}
	})
	// main.slots's two groups, each under a MinSize they pass together,
	// are kept; past their sum, neither.
	t.Run("one global's groups together", func(t *testing.T) {
		each := uint64(nSlots * typingItem)
		for _, tt := range []struct {
			min  uint64
			want int
		}{{each * 3 / 2, 2}, {each * 3, 0}} {
			rep, err := a.Holders(MinSize(tt.min))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, g := range rep.Groups {
				if g.Root.Global == "main.slots" {
					n++
				}
			}
			if n != tt.want {
				t.Errorf("MinSize(%d): %d groups of main.slots, want %d:\n%s", tt.min, n, tt.want, reportText(t, rep))
			}
		}
	})
	t.Run("weak pointers hold nothing", func(t *testing.T) {
		for _, g := range rep.Groups {
			if g.Root.Global == "main.weakItems" {
				t.Errorf("weak pointers reported as a holder:\n%s", g.Text("", PlainStyle{}))
			}
		}
	})
	// AddCleanup's arguments are not in the dump's roots: say so.
	t.Run("cleanups", func(t *testing.T) {
		for _, u := range rep.Unknown {
			if u.Reason == CleanupClosures {
				if !strings.Contains(u.Text, "cleanups registered with runtime.AddCleanup have not run") {
					t.Errorf("cleanup warning %q", u.Text)
				}
				// The boxes of main.owners' cleanups' items, at least.
				m := regexp.MustCompile(`boxes of their arguments \((\d+) objects, allocated in runtime\.AddCleanup\) reach`).FindStringSubmatch(u.Text)
				boxes := 0
				if m != nil {
					boxes, _ = strconv.Atoi(m[1])
				}
				if boxes < rwN {
					t.Errorf("cleanup warning %q: want the boxes of %d arguments or more", u.Text, rwN)
				}
				return
			}
		}
		t.Errorf("no cleanup_closures warning among %+v", rep.Unknown)
	})
}

// Goroutines blocked in all the ways real leaks block, and the goroutines
// the standard library starts for a context (database/sql's rows,
// os/signal.NotifyContext).
func TestHoldersRealWorldGoroutines(t *testing.T) {
	t.Parallel()
	a := rwAnalyze(t, "rw-goroutines")
	rep, err := a.Holders()
	if err != nil {
		t.Fatal(err)
	}
	text := reportText(t, rep)
	lo, hi := each(700)
	var wants []rwWant
	for _, fn := range []string{"main.tick", "main.groupWorker", "main.watchParent", "main.condWait",
		"main.mutexWait", "main.sleepLong", "main.waitTimer", "main.nilRecv"} {
		wants = append(wants, rwWant{kind: heapdump.RootFrame, holder: regexp.QuoteMeta(fn), path: "argument>context.valueCtx",
			inside: ".val>[]uint8", count: rwN, perGoroutine: true, min: lo, max: hi})
	}
	lo2, hi2 := each(1024)
	wants = append(wants,
		rwWant{kind: heapdump.RootFrame, holder: `main\.selectForever`, path: "deferred call main.selectForever.deferwrap1 +16 (stack object at +24)>context.valueCtx",
			count: rwN, perGoroutine: true, min: lo, max: hi},
		rwWant{kind: heapdump.RootFrame, holder: `os/signal\.NotifyContext\.func1`, path: "local c>os/signal.signalCtx",
			inside: ".Context>context.valueCtx", count: rwN, perGoroutine: true, min: lo2, max: hi2},
		rwWant{kind: heapdump.RootFrame, holder: `database/sql\.\(\*Rows\)\.awaitDone`, path: "argument>context.cancelCtx",
			inside: ".Context>context.valueCtx", count: rwN, perGoroutine: true, min: lo2, max: hi2},
	)
	checkRW(t, rep, text, wants)
	// The wait queue of a connection pool: the goroutines waiting for the
	// pool's one connection, each reaching its context from three frames.
	pool := rwWant{kind: heapdump.RootFrame, holder: `database/sql\.\(\*DB\)\.conn`, path: "argument>context.valueCtx",
		count: rwN, min: lo, max: hi}
	// WithCancel over a custom Context with a Done channel of its own: the
	// context package's goroutine that waits on it.
	custom := rwWant{kind: heapdump.RootFrame, holder: `context\.\(\*cancelCtx\)\.propagateCancel\.func2`,
		path: "local parent>main.doneCtx", inside: ".Context>context.valueCtx", count: rwN, perGoroutine: true, min: lo, max: hi}
	checkRW(t, rep, text, []rwWant{pool, custom})
	checkHeldBy(t, rep)
	// The timers of main.tick's tickers and main.waitTimer's timers, which
	// signal channels: named by time.sendTime and where they were made.
	made := map[string]int{}
	for _, tm := range a.g.Timers() {
		h := a.timerHolder(tm)
		if h.Function == "time.sendTime" && h.Detail == DetailChanTimer && h.Creator != nil {
			made[h.Creator.Function]++
		}
	}
	if made["main.tick"] != rwN || made["main.waitTimer"] != rwN {
		t.Errorf("timers of channels by creator %v, want %d of main.tick and of main.waitTimer", made, rwN)
	}
	for _, want := range []string{
		fmt.Sprintf(" %d goroutines in main.tick (created at main.goN piles/realworld.go:", rwN),
		fmt.Sprintf(" %d goroutines in database/sql.(*Rows).awaitDone (created at database/sql.(*Rows).initContextClose sql/sql.go:", rwN),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}

// net/http on 127.0.0.1: handlers blocked holding their request, and
// response bodies never closed, whose connections' goroutines hold the
// request contexts.
func TestHoldersRealWorldNet(t *testing.T) {
	t.Parallel()
	rep, text := rwReport(t, "rw-net")
	lo, hi := each(700)
	checkRW(t, rep, text, []rwWant{
		{kind: heapdump.RootFrame, holder: `main\.slowHandler`, path: "local>context.valueCtx", inside: ".val>[]uint8",
			count: rwN, perGoroutine: true, min: lo, max: hi},
	})
	// Each context of a request whose body is never closed: the
	// connection's readLoop and the transport's idle pool both reach it.
	var found bool
	for _, g := range rep.Groups {
		if g.Root.Function == "net/http.(*persistConn).readLoop" && g.Object.Type == "context.valueCtx" {
			found = true
			if g.Count != rwN || g.RetainedBytes < lo || g.RetainedBytes > hi {
				t.Errorf("%d contexts retaining %d bytes, want %d retaining %d to %d", g.Count, g.RetainedBytes, rwN, lo, hi)
			}
		}
	}
	if !found {
		t.Errorf("no group of the contexts net/http.(*persistConn).readLoop holds:\n%s", text)
	}
	// The connection itself, which readLoop holds in a compiler's
	// temporary (typed from writeLoop's receiver), and writeLoop too.
	found = false
	for _, g := range rep.Groups {
		if strings.HasPrefix(g.Root.Function, "net/http.(*persistConn).") && g.Object.Type == "net/http.persistConn" {
			found = true
			checkTyped(t, g.Path)
		}
	}
	if !found {
		t.Errorf("no group of the net/http.persistConn that net/http.(*persistConn).readLoop or writeLoop holds:\n%s", text)
	}
	// Every path typed, through the compilers' temporaries of net/http's
	// frames too.
	for _, g := range rep.Groups {
		checkTyped(t, g.Path)
	}
	checkHeldBy(t, rep)
}

// Goroutines parked in a C call (a cgo program) hold their contexts.
func TestHoldersRealWorldCgo(t *testing.T) {
	t.Parallel()
	realPiles(t)
	if !realPilesCgo {
		t.Skip("cgo is off (no C compiler): the pattern rw-cgo is not built")
	}
	rep, err := rwAnalyze(t, "rw-cgo").Holders()
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := each(700)
	checkRW(t, rep, reportText(t, rep), []rwWant{{kind: heapdump.RootFrame, holder: `main\.cgoWait`,
		path: "argument>context.valueCtx", count: rwN, perGoroutine: true, min: lo, max: hi}})
}

// The same shapes, let go of before the dump: no holder.
func TestHoldersRealWorldClean(t *testing.T) {
	t.Parallel()
	rep, text := rwReport(t, "rw-clean")
	if len(rep.Groups) != 0 {
		t.Errorf("%d groups in a clean program:\n%s", len(rep.Groups), text)
	}
}

// goMinor returns the minor release of the Go version v ("go1.27.3": 27),
// or a large number for a development version.
func goMinor(v string) int {
	v, ok := strings.CutPrefix(v, "go1.")
	if i := strings.IndexAny(v, ".-rcbeta "); i >= 0 {
		v = v[:i]
	}
	n, err := strconv.Atoi(v)
	if !ok || err != nil {
		return 1 << 30
	}
	return n
}
