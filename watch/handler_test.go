package watch_test

import (
	"encoding/json"
	"expvar"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/watch"
)

// heldPayload is a payload a goroutine of TestHandler holds, for the
// holders endpoint to find.
//
//go:noinline
func holdPayload(p []byte, stop <-chan struct{}) {
	<-stop
	runtime.KeepAlive(p)
}

func TestHandler(t *testing.T) {
	w := watch.New(watch.Options{Grace: 20 * time.Millisecond, Threshold: 1, MinInterval: time.Hour, Logger: quietLogger()})
	defer w.Close()
	mux := http.NewServeMux()
	mux.Handle("/debug/ctxleak/", w.Handler())
	mux.Handle("/debug/vars", expvar.Handler())
	mux.Handle("GET /hello", w.Middleware(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.WriteString(rw, "hello")
	})))
	base := serve(t, mux)
	for range 3 {
		get(t, http.DefaultClient, base+"/hello")
	}
	stop := make(chan struct{})
	defer close(stop)
	go holdPayload(make([]byte, 96<<10), stop)

	t.Run("status", func(t *testing.T) {
		resp, body := fetch(t, base+"/debug/ctxleak/status", http.StatusOK)
		var st map[string]any
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
		if st["schema"] != watch.StatusSchema || st["watched_count"] != 3.0 {
			t.Errorf("status: schema %v, watched_count %v; want %s, 3\n%s", st["schema"], st["watched_count"], watch.StatusSchema, body)
		}
		for _, k := range []string{"labels", "alive_values", "reports"} {
			if _, ok := st[k].([]any); !ok {
				t.Errorf("status %q is %v, want a list", k, st[k])
			}
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
	})
	t.Run("index", func(t *testing.T) {
		_, body := fetch(t, base+"/debug/ctxleak/", http.StatusOK)
		if !strings.Contains(body, "<td>GET /hello</td><td>3</td>") {
			t.Errorf("the page does not count GET /hello:\n%s", body)
		}
	})
	t.Run("holders", func(t *testing.T) {
		_, body := fetch(t, base+"/debug/ctxleak/holders?min_size=64KiB", http.StatusOK)
		if !strings.Contains(body, "holdPayload") {
			t.Errorf("the holder report does not name holdPayload:\n%s", body)
		}
		_, body = fetch(t, base+"/debug/ctxleak/holders?min_size=64KiB&format=json", http.StatusOK)
		var rep struct {
			Groups []struct {
				Root struct{ Function string }
			}
		}
		if err := json.Unmarshal([]byte(body), &rep); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, g := range rep.Groups {
			found = found || strings.HasSuffix(g.Root.Function, ".holdPayload")
		}
		if !found {
			t.Errorf("the JSON holder report has no group held by holdPayload:\n%s", body)
		}
		fetch(t, base+"/debug/ctxleak/holders?min_size=lots", http.StatusBadRequest)
		fetch(t, base+"/debug/ctxleak/holders?format=xml", http.StatusBadRequest)
	})
	t.Run("heapdump off", func(t *testing.T) {
		fetch(t, base+"/debug/ctxleak/heapdump", http.StatusNotFound)
	})
	t.Run("unknown", func(t *testing.T) {
		fetch(t, base+"/debug/ctxleak/nothing", http.StatusNotFound)
	})
	t.Run("expvar", func(t *testing.T) {
		_, body := fetch(t, base+"/debug/vars", http.StatusOK)
		var vars struct {
			Ctxleak struct {
				Watched uint64 `json:"watched_count"`
				Labels  map[string]struct {
					Watched uint64 `json:"watched_count"`
				} `json:"labels"`
			} `json:"ctxleak"`
		}
		if err := json.Unmarshal([]byte(body), &vars); err != nil {
			t.Fatal(err)
		}
		if vars.Ctxleak.Watched < 3 || vars.Ctxleak.Labels["GET /hello"].Watched != 3 {
			t.Errorf("expvar ctxleak: %+v, want GET /hello watched 3", vars.Ctxleak)
		}
	})
}

func TestHeapDumpEndpoint(t *testing.T) {
	w := watch.New(watch.Options{AllowHeapDump: true, Logger: quietLogger()})
	defer w.Close()
	base := serve(t, w.Handler())
	resp, body := fetch(t, base+"/debug/ctxleak/heapdump", http.StatusOK)
	if !strings.HasPrefix(body, "go1.7 heap dump\n") {
		t.Errorf("the body is not a heap dump: %.40q", body)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id, err := binsym.GoBuildID(exe)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get(watch.BuildIDHeader); got != id {
		t.Errorf("%s: %q, want %q", watch.BuildIDHeader, got, id)
	}
}

// fetch gets url, checks the status code and, for the watcher's endpoints,
// Cache-Control, and returns the
// response and its body.
func fetch(t *testing.T, url string, code int) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != code {
		t.Errorf("GET %s: %s, want %d: %s", url, resp.Status, code, b)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" && strings.Contains(url, "/debug/ctxleak/") {
		t.Errorf("GET %s: Cache-Control %q, want no-store", url, cc)
	}
	return resp, string(b)
}
