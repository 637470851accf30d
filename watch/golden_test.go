package watch_test

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/watch"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// volatile are the keys of the status whose values change from run to run.
var volatile = regexp.MustCompile(`("gc_count"|"forced_gc_count"): \d+`)

// TestStatusGolden pins the document ctxleak.watch/v1: the status of a
// watcher that watched three requests, still within their grace.
func TestStatusGolden(t *testing.T) {
	w := watch.New(watch.Options{Grace: time.Hour, Logger: quietLogger()})
	defer w.Close()
	mux := http.NewServeMux()
	mux.Handle("/debug/ctxleak/", w.Handler())
	mux.Handle("GET /hello", w.Middleware(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.WriteString(rw, "hello")
	})))
	base := serve(t, mux)
	for range 3 {
		get(t, http.DefaultClient, base+"/hello")
	}
	_, body := fetch(t, base+"/debug/ctxleak/status", http.StatusOK)
	got := volatile.ReplaceAll([]byte(body), []byte("$1: 0"))

	golden := filepath.Join("testdata", "golden", "status.golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestStatusGolden -update ./watch writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("status differs from %s (go test -run TestStatusGolden -update ./watch to accept):\n%s", golden, got)
	}
}
