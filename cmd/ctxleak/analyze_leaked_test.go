package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeLeaked reads the goroutineleak profile profiles/testdata
// holds (Go 1.27.3: 1,500 goroutines blocked for ever in ch <- v, 200 on
// a channel a global keeps), from a file and from a
// /debug/pprof/goroutineleak URL, and gates on its count.
func TestAnalyzeLeaked(t *testing.T) {
	const fixture = "../../profiles/testdata/goroutineleak.pb.gz"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/goroutineleak" {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, fixture)
	}))
	defer srv.Close()

	for _, src := range []string{fixture, srv.URL + "/debug/pprof/goroutineleak"} {
		code, stdout, stderr := ctxleak(t, "analyze", src)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "1500 in 1 group, blocked for ever") ||
			!strings.Contains(stdout, "main.send (leakprof/main.go:21)") || !strings.Contains(stdout, "chan send") {
			t.Errorf("analyze %s: exit %d, stderr %q, stdout:\n%s", src, code, stderr, stdout)
		}
	}

	code, stdout, stderr := ctxleak(t, "analyze", "--fail-on-leaked-goroutines", "0", "--format", "json", fixture)
	var doc struct {
		Leaked struct {
			Count  int64 `json:"goroutine_count"`
			Groups []struct {
				BlockedOn string `json:"blocked_on"`
				Count     int64  `json:"goroutine_count"`
			} `json:"groups"`
		} `json:"leaked_goroutines"`
		Result string `json:"result"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if code != 1 || doc.Result != "fail" || doc.Leaked.Count != 1500 || len(doc.Leaked.Groups) != 1 ||
		doc.Leaked.Groups[0].BlockedOn != "chan send" ||
		!strings.HasSuffix(stderr, "1500 goroutines proven leaked in 1 group, over the limit of 0 (--fail-on-leaked-goroutines 0)\n") {
		t.Errorf("gate 0: exit %d, stderr %q, JSON %+v", code, stderr, doc)
	}
	if code, _, _ := ctxleak(t, "analyze", "--fail-on-leaked-goroutines", "1500", fixture); code != 0 {
		t.Errorf("gate 1500: exit %d, want 0", code)
	}
	code, _, stderr = ctxleak(t, "analyze", "--fail-on-leaked-goroutines", "0", "../../profiles/testdata/goroutineleak.txt", "--base", fixture)
	if code != 1 {
		t.Errorf("with a base: exit %d, stderr %q", code, stderr)
	}
	dir := t.TempDir()
	fixtures(t, dir)
	code, _, stderr = ctxleak(t, "analyze", "--fail-on-leaked-goroutines", "0", filepath.Join(dir, "heap.pb.gz"))
	if code != 2 || !strings.Contains(stderr, "--fail-on-leaked-goroutines needs a goroutineleak profile") {
		t.Errorf("gate without a leak profile: exit %d, stderr %q", code, stderr)
	}
}
