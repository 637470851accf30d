package webview

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ctxleak/ctxleak/heapdump"
)

// chromium returns the path of a Chromium or Chrome binary: $CTXLEAK_CHROMIUM,
// else the first of the usual names on PATH.
func chromium() string {
	if p := os.Getenv("CTXLEAK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts one headless Chromium for the test, with a fresh profile
// and no network of its own beyond the test server.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium()
	if exe == "" {
		t.Skip("no chromium binary on PATH (install Debian's chromium, as .ci/run does, or set CTXLEAK_CHROMIUM)")
	}
	// A browser that exits before it listens is started again, up to
	// browserStarts times: once in a CI run of the whole suite, Chromium
	// exited 0.6 s after its start, having printed nothing but its usual
	// warnings, and ran at every start after.
	for range browserStarts {
		ctx, stop := startBrowser(t, exe)
		err := chromedp.Do(ctx) // starts the browser
		if err == nil {
			t.Cleanup(stop)
			return ctx
		}
		stop()
		t.Logf("starting %s: %v", exe, err)
	}
	t.Fatalf("starting %s failed %d times (each logged above)", exe, browserStarts)
	return nil
}

// browserStarts is how many times browser starts Chromium before it fails.
const browserStarts = 3

// startBrowser returns the context of a headless Chromium not yet started,
// with a profile of its own, and the function that stops it.
func startBrowser(t *testing.T, exe string) (context.Context, func()) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	return ctx, func() {
		cancel()
		cancelAlloc()
	}
}

// step runs actions with a time limit.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// run runs one action that returns a value, with a time limit.
func run[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitCount waits until the page has want elements matching the CSS
// selector sel, polling with back-off.
func waitCount(t *testing.T, ctx context.Context, sel string, want int) {
	t.Helper()
	q, _ := json.Marshal(sel)
	expr := fmt.Sprintf("document.querySelectorAll(%s).length", q)
	deadline := time.Now().Add(20 * time.Second)
	var n int
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		n = run(t, ctx, "counting "+sel, chromedp.Evaluate[int](expr))
		if n == want || time.Now().After(deadline) {
			break
		}
		time.Sleep(wait)
	}
	if n != want {
		t.Fatalf("%d elements match %s, want %d", n, sel, want)
	}
}

// screenshot saves the page as NAME.png in $CTXLEAK_SCREENSHOTS, if set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("CTXLEAK_SCREENSHOTS")
	if dir == "" {
		return
	}
	png := run(t, ctx, "screenshot", chromedp.FullScreenshot(100))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// mainText returns the visible text of the page's main element.
func mainText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return run(t, ctx, "reading main", chromedp.Text(chromedp.CSS("main")))
}

// wantText fails the test for each of wants the text lacks.
func wantText(t *testing.T, page, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s page lacks %q:\n%s", page, w, text)
		}
	}
}

// TestBrowser opens every page in headless Chromium, one browser for all:
// it reads the groups, follows a group's path to the object and who holds
// it, expands the dominator tree down to a node with more children than a
// page and loads the rest, and reads the roots and the treemap.
func TestBrowser(t *testing.T) {
	base := server(t)
	ctx := browser(t)

	// Groups: the report as a person reads it.
	step(t, ctx, "groups page", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("section.group")))
	text := mainText(t, ctx)
	wantText(t, "groups", text,
		"held by global main.cache", "3.0 MiB",
		"goroutine", "frame main.worker", "[chan receive]",
		"timer context.WithDeadlineCause.func2",
		"global main.sessions", "frame main.deferred",
		"allocated at main.newPayload (webprog/main.go:",
		".val → main.Upload", ".Body → []uint8")
	screenshot(t, ctx, "web-groups")

	// Follow the path of the group held by main.worker.
	step(t, ctx, "who holds this",
		chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("section.group")].find(s => s.textContent.includes("frame main.worker")).querySelector("a.pathlink")`)),
		chromedp.WaitVisible(chromedp.ID("paths")))
	loc := run(t, ctx, "location", chromedp.Location())
	if !strings.Contains(loc, "/object/0x") || !strings.HasSuffix(loc, "#paths") {
		t.Errorf("followed the path to %s", loc)
	}
	text = mainText(t, ctx)
	wantText(t, "object", text,
		"[]uint8 at 0x", "2.0 MiB", "allocated at", "main.newPayload (webprog/main.go:",
		"Who holds this", "goroutine", "frame main.worker", "argument → context.valueCtx", ".val → main.Upload", ".Body → []uint8")
	screenshot(t, ctx, "web-object")

	// Dominator tree: expand main.sessions, then its slice of 300 sessions,
	// which shows 200 and a "more" button.
	var sessions heapdump.NodeID = heapdump.NoNode
	testAn.Graph().ForEachRoot(func(r *heapdump.Root) bool {
		if r.Kind == heapdump.RootGlobal && testAn.Graph().RootName(r) == "main.sessions" {
			sessions = r.Node
		}
		return sessions == heapdump.NoNode
	})
	if sessions == heapdump.NoNode {
		t.Fatal("no root for main.sessions")
	}
	sel := `li[data-node="` + strconv.Itoa(int(sessions)) + `"]`
	step(t, ctx, "tree page", chromedp.Navigate(base+"tree"), chromedp.WaitVisible(chromedp.CSS(sel)))
	wantText(t, "tree", mainText(t, ctx), "all roots", "global main.cache", "global main.sessions", "frame main.worker")
	step(t, ctx, "expanding main.sessions", chromedp.Click(chromedp.CSS(sel+" > button.toggle")))
	waitCount(t, ctx, sel+" > ul.tree > li.node", 1)
	slice := sel + " > ul.tree > li.node"
	wantText(t, "tree", run(t, ctx, "slice row", chromedp.Text(chromedp.CSS(slice))), "[]*main.Session at 0x", "1.2 MiB")
	step(t, ctx, "expanding the slice", chromedp.Click(chromedp.CSS(slice+" > button.toggle")))
	waitCount(t, ctx, slice+" > ul.tree > li.node", DefaultPageSize)
	row := run(t, ctx, "session row", chromedp.Text(chromedp.CSS(slice+" > ul.tree > li.node")))
	wantText(t, "tree", row, "main.Session at 0x", "own 32 B")
	step(t, ctx, "more", chromedp.Click(chromedp.CSS(slice+" > ul.tree > li.more-row > button.more")))
	waitCount(t, ctx, slice+" > ul.tree > li.node", 300)
	waitCount(t, ctx, slice+" > ul.tree > li.more-row", 0)
	screenshot(t, ctx, "web-tree")

	// Roots: goroutines with their frames, globals, timers.
	step(t, ctx, "roots page", chromedp.Navigate(base+"roots"), chromedp.WaitVisible(chromedp.ID("globals")))
	wantText(t, "roots", mainText(t, ctx),
		"chan receive", "main.worker", "webprog/main.go:", "main.main (webprog/main.go:",
		"main.cache", "main.sessions", "context.WithDeadlineCause.func2", "created at main.main (webprog/main.go:")
	screenshot(t, ctx, "web-roots")

	// Treemap: a box per holder and type.
	step(t, ctx, "treemap page", chromedp.Navigate(base+"treemap"), chromedp.WaitVisible(chromedp.CSS("svg.treemap")))
	if n := run(t, ctx, "boxes", chromedp.Evaluate[int](`document.querySelectorAll("svg.treemap rect.type-box").length`)); n != 5 {
		t.Errorf("%d type boxes in the treemap, want 5 (one per group)", n)
	}
	svg := run(t, ctx, "svg text", chromedp.Evaluate[string](`document.querySelector("svg.treemap").textContent`))
	wantText(t, "treemap", svg, "global main.cache", "[]uint8")
	screenshot(t, ctx, "web-treemap")
}
