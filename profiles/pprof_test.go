package profiles_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ctxleak/ctxleak/internal/allochelper"
	"github.com/ctxleak/ctxleak/profiles"
	"github.com/ctxleak/ctxleak/profiles/profilestest"
)

// leakPayload is the bytes each leakserver request allocates (its -payload
// default): a size class of its own, so the profile's bytes are exact.
const leakPayload = 64 << 10

// TestRealProfiles checks the analysis against "go tool pprof" on profiles
// written by a real server process: a base heap profile taken before any
// request, then, after requests whose handlers leak their payload in a
// goroutine that carries the request's labels, heap and goroutine
// profiles in proto and in legacy text form. It also reads them by URL.
func TestRealProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a server")
	}
	srv := profilestest.Start(t, "-leak")
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	srv.Save(t, "/debug/pprof/heap?gc=1", file("base.pb.gz"))
	const requests = 40
	srv.Load(t, requests, 4)
	srv.Save(t, "/debug/pprof/heap?gc=1", file("heap.pb.gz"))
	srv.Save(t, "/debug/pprof/heap?gc=1&debug=1", file("heap.txt"))
	srv.Save(t, "/debug/pprof/goroutine", file("goroutine.pb.gz"))
	srv.Save(t, "/debug/pprof/goroutine?debug=1", file("goroutine.txt"))

	// The subtests run "go tool pprof" and read the files in parallel; the
	// server stops once they are all done.
	load := func(t *testing.T, name string) *profiles.Profile {
		t.Helper()
		var l profiles.Loader
		p, err := l.Load(context.Background(), file(name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	for _, name := range []string{"base.pb.gz", "heap.pb.gz", "heap.txt"} {
		t.Run("totals/"+name, func(t *testing.T) {
			t.Parallel()
			r, err := profiles.AnalyzeHeap([]*profiles.Profile{load(t, name)}, nil, profiles.Options{})
			if err != nil {
				t.Fatal(err)
			}
			bytes, bytesTotal := pprofTop(t, "-sample_index=inuse_space", "-unit=B", file(name))
			objects, objectsTotal := pprofTop(t, "-sample_index=inuse_objects", file(name))
			t.Logf("%s: ctxleak %d B in %d objects; pprof %d B in %d objects", name, r.InuseBytes, r.InuseObjects, bytesTotal, objectsTotal)
			if r.InuseBytes != bytesTotal || r.InuseBytes != bytes {
				t.Errorf("inuse_space: ctxleak %d, pprof %d (shown %d)", r.InuseBytes, bytesTotal, bytes)
			}
			if r.InuseObjects != objectsTotal || r.InuseObjects != objects {
				t.Errorf("inuse_objects: ctxleak %d, pprof %d (shown %d)", r.InuseObjects, objectsTotal, objects)
			}
		})
	}

	t.Run("growth", func(t *testing.T) {
		t.Parallel()
		r, err := profiles.AnalyzeHeap(
			[]*profiles.Profile{load(t, "heap.pb.gz")}, []*profiles.Profile{load(t, "base.pb.gz")},
			profiles.Options{Requests: requests})
		if err != nil {
			t.Fatal(err)
		}
		bytes, _ := pprofTop(t, "-sample_index=inuse_space", "-unit=B", "-diff_base", file("base.pb.gz"), file("heap.pb.gz"))
		objects, _ := pprofTop(t, "-sample_index=inuse_objects", "-diff_base", file("base.pb.gz"), file("heap.pb.gz"))
		t.Logf("growth: ctxleak %+d B, %+d objects; pprof -diff_base %+d B, %+d objects", r.Base.GrowthBytes, r.Base.GrowthObjects, bytes, objects)
		if r.Base.GrowthBytes != bytes || r.Base.GrowthObjects != objects {
			t.Errorf("growth: ctxleak %d B %d objects, pprof -diff_base %d B %d objects",
				r.Base.GrowthBytes, r.Base.GrowthObjects, bytes, objects)
		}
		// The handler's payload is the top site: one payload per request,
		// new since the base, on the request path.
		top := r.Sites[0]
		if top.Function != "main.handleUpload" || !payloads(top.Growth.Bytes, requests) || !top.Growth.New ||
			!top.Request || top.RequestBytes != top.InuseBytes || int(top.Growth.PerRequestBytes)/1024 != leakPayload/1024 {
			t.Errorf("top site = %s, %d B request-scoped, growth %+v; want main.handleUpload, %d new payloads on the request path",
				top.Position, top.RequestBytes, *top.Growth, requests)
		}
	})

	// One real leak, three gates: one ::error per finding that trips a
	// gate, each at a file of the module (the leak server's source), none
	// in the Go root, none for the small growths of other sites.
	t.Run("github", func(t *testing.T) {
		t.Parallel()
		r := &profiles.Report{}
		var err error
		if r.Heap, err = profiles.AnalyzeHeap([]*profiles.Profile{load(t, "heap.pb.gz")}, []*profiles.Profile{load(t, "base.pb.gz")},
			profiles.Options{Requests: requests}); err != nil {
			t.Fatal(err)
		}
		if r.Goroutines, err = profiles.AnalyzeGoroutines([]*profiles.Profile{load(t, "goroutine.pb.gz")}, profiles.Options{}); err != nil {
			t.Fatal(err)
		}
		limit := func(n int64) *int64 { return &n }
		if r.Gates, err = (profiles.Gates{Growth: limit(1 << 20), Retained: limit(1 << 20), Goroutines: limit(0)}).Check(r.Heap, r.Goroutines); err != nil {
			t.Fatal(err)
		}
		module, err := filepath.Abs("..")
		if err != nil {
			t.Fatal(err)
		}
		outside := 0
		for _, s := range r.Heap.Sites {
			if s.Growth != nil && s.Growth.Bytes > 0 && !profiles.InModule(s.Position, module) {
				outside++
			}
		}
		t.Logf("%d sites outside the module grew", outside)
		var out strings.Builder
		if err := r.WriteGitHub(&out, module); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		places := map[string]bool{}
		for _, l := range lines {
			props, msg, ok := strings.Cut(strings.TrimPrefix(l, "::error "), "::")
			if !ok || !strings.HasPrefix(l, "::error file=profiles/testdata/leakserver/main.go,line=") {
				t.Errorf("annotation not at a line of the module's leak server: %s", l)
				continue
			}
			if places[props] {
				t.Errorf("two annotations at one place: %s", props)
			}
			places[props] = true
			if !strings.Contains(msg, "main.") {
				t.Errorf("annotation names no function of the module: %s", l)
			}
		}
		// The payloads (growth and retained, one site), and the
		// goroutines blocked in notify: two places.
		if len(lines) != 2 || !strings.Contains(out.String(), "growth and retained gate::main.handleUpload") ||
			!strings.Contains(out.String(), "goroutines gate::40 goroutines started in ") {
			t.Errorf("want 2 annotations, the payload site for 2 gates and the goroutines; got:\n%s", out.String())
		}
	})

	t.Run("sites", func(t *testing.T) {
		t.Parallel()
		// With the helpers hidden, pprof's flat value of each function is
		// what ctxleak charges to the function as an allocation site.
		r, err := profiles.AnalyzeHeap([]*profiles.Profile{load(t, "heap.pb.gz")}, nil, profiles.Options{By: profiles.ByFunction})
		if err != nil {
			t.Fatal(err)
		}
		flat := pprofFlat(t, "-sample_index=inuse_space", "-unit=B", "-hide="+helpersRegexp(), file("heap.pb.gz"))
		ours := map[string]int64{}
		for _, s := range r.Sites {
			if !profiles.IsHelper(s.Function) {
				ours[s.Function] = s.InuseBytes
			}
		}
		for fn, v := range flat {
			if ours[fn] != v {
				t.Errorf("site %s: ctxleak %d B, pprof flat %d B", fn, ours[fn], v)
			}
		}
		for fn, v := range ours {
			if _, ok := flat[fn]; !ok && v != 0 {
				t.Errorf("site %s: ctxleak %d B, not in pprof's flat list", fn, v)
			}
		}
		if len(flat) < 10 {
			t.Errorf("pprof shows only %d functions: %v", len(flat), flat)
		}
	})

	// Both encodings name the same sites: the legacy text through its
	// comment lines.
	for _, name := range []string{"heap.pb.gz", "heap.txt"} {
		t.Run("request/"+name, func(t *testing.T) {
			t.Parallel()
			r, err := profiles.AnalyzeHeap([]*profiles.Profile{load(t, name)}, nil, profiles.Options{By: profiles.ByFunction})
			if err != nil {
				t.Fatal(err)
			}
			sites := map[string]profiles.AllocSite{}
			for _, s := range r.Sites {
				sites[s.Function] = s
			}
			upload, cache := sites["main.handleUpload"], sites["main.fillCache"]
			if !payloads(upload.InuseBytes, requests) || upload.RequestBytes != upload.InuseBytes || !upload.Request {
				t.Errorf("main.handleUpload: %d B in %d objects, %d B request-scoped; want %d payloads on the request path",
					upload.InuseBytes, upload.InuseObjects, upload.RequestBytes, requests)
			}
			// 64 blocks of 16 KiB, and the slice that holds them.
			if cache.InuseBytes < 1<<20 || cache.InuseBytes > 1<<20+4096 || cache.Request {
				t.Errorf("main.fillCache: %d B, request %v; want 1 MiB off the request path", cache.InuseBytes, cache.Request)
			}
			if r.RequestBytes < requests*leakPayload || r.RequestBytes > r.InuseBytes-1<<20 {
				t.Errorf("request-scoped %d B of %d B in use", r.RequestBytes, r.InuseBytes)
			}
		})
	}

	for _, name := range []string{"goroutine.pb.gz", "goroutine.txt"} {
		t.Run("goroutines/"+name, func(t *testing.T) {
			t.Parallel()
			p := load(t, name)
			r, err := profiles.AnalyzeGoroutines([]*profiles.Profile{p}, profiles.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, total := pprofTop(t, file(name))
			if r.Total != total {
				t.Errorf("total goroutines: ctxleak %d, pprof %d", r.Total, total)
			}
			if r.Captured != requests || len(r.Groups) == 0 {
				t.Fatalf("captured = %d, want %d", r.Captured, requests)
			}
			g := r.Groups[0]
			if g.Start.Function != "main.notify" || g.Wait.Function != "main.notify" || g.Count != requests ||
				strings.Join(g.LabelKeys, ",") != "request_id,route" || g.Labels != nil {
				t.Errorf("first group = %+v; want %d goroutines started and waiting in main.notify with keys request_id, route and no values",
					g, requests)
			}
		})
	}

	t.Run("url", func(t *testing.T) {
		t.Parallel()
		l := profiles.Loader{}
		heap, err := l.Load(context.Background(), srv.URL+"/debug/pprof/heap")
		if err != nil {
			t.Fatal(err)
		}
		gr, err := l.Load(context.Background(), srv.URL+"/debug/pprof/goroutine")
		if err != nil {
			t.Fatal(err)
		}
		if heap.Kind != profiles.Heap || gr.Kind != profiles.Goroutine || heap.Format != profiles.Proto || gr.Format != profiles.Proto {
			t.Fatalf("kinds %s/%s formats %s/%s", heap.Kind, gr.Kind, heap.Format, gr.Format)
		}
		r, err := profiles.AnalyzeGoroutines([]*profiles.Profile{gr}, profiles.Options{LabelValues: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Captured != requests || len(r.Groups[0].Labels["request_id"]) != requests ||
			strings.Join(r.Groups[0].Labels["route"], ",") != "/upload" {
			t.Errorf("captured %d, labels %v", r.Captured, r.Groups[0].Labels)
		}
		h, err := profiles.AnalyzeHeap([]*profiles.Profile{heap}, nil, profiles.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if h.RequestBytes < requests*leakPayload {
			t.Errorf("request-scoped bytes %d, want at least %d", h.RequestBytes, requests*leakPayload)
		}
	})
}

// payloads reports whether n bytes are n payloads, give or take the small
// objects the runtime sometimes allocates within the same make (the
// profile then charges them to the same line).
func payloads(bytes int64, n int) bool {
	return bytes >= int64(n)*leakPayload && bytes < int64(n)*leakPayload+4096
}

var showingRE = regexp.MustCompile(`Showing nodes accounting for (-?[0-9]+)B?, .* of (-?[0-9]+)B? total`)

// pprofTop runs "go tool pprof -top" with nothing dropped and returns the
// sum it shows (the total of all samples, or the difference with
// -diff_base) and the total it compares with (the base's with -diff_base).
func pprofTop(t *testing.T, args ...string) (shown, total int64) {
	t.Helper()
	out := goToolPprof(t, args...)
	m := showingRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no totals in pprof output:\n%s", out)
	}
	shown, _ = strconv.ParseInt(m[1], 10, 64)
	total, _ = strconv.ParseInt(m[2], 10, 64)
	return shown, total
}

var flatRowRE = regexp.MustCompile(`^\s*(-?[0-9]+)B?\s+\S+\s+\S+\s+-?[0-9]+B?\s+\S+\s+(.+?)( \(inline\))?$`)

// pprofFlat runs "go tool pprof -top" and returns the non-zero flat values
// by function.
func pprofFlat(t *testing.T, args ...string) map[string]int64 {
	t.Helper()
	out := goToolPprof(t, args...)
	flat := map[string]int64{}
	for line := range strings.Lines(out) {
		m := flatRowRE.FindStringSubmatch(strings.TrimRight(line, "\n"))
		if m == nil {
			continue
		}
		v, _ := strconv.ParseInt(m[1], 10, 64)
		if v != 0 {
			flat[m[2]] += v
		}
	}
	return flat
}

func goToolPprof(t *testing.T, args ...string) string {
	t.Helper()
	all := append([]string{"-top", "-symbolize=none", "-nodefraction=0", "-edgefraction=0", "-nodecount=1000000"}, args...)
	bin, err := pprofBinary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, all...).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %s: %v\n%s", strings.Join(all, " "), err, out)
	}
	return string(out)
}

// pprofBinary is the executable "go tool pprof" runs, found once: running
// it directly spares each call the go command's start-up.
var pprofBinary = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "tool", "-n", "pprof").Output()
	if err != nil {
		return "", fmt.Errorf("go tool -n pprof: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
})

// helpersRegexp turns allochelper.Names into a regexp for pprof's -hide.
func helpersRegexp() string {
	var alts []string
	for _, h := range allochelper.Names {
		q := regexp.QuoteMeta(h)
		if strings.HasSuffix(h, ".") || strings.HasSuffix(h, "/") {
			alts = append(alts, q)
		} else {
			alts = append(alts, q+`(\[.*\])?$`)
		}
	}
	return `^(` + strings.Join(alts, "|") + `)`
}
