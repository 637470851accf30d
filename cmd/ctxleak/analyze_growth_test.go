package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/profiles/profilestest"
)

// goroutineBaseFixture writes goroutine-base.pb.gz to dir: the goroutines
// of goroutine.pb.gz (see fixtures) before the load, that is main.main,
// the flush loop and 5 of the 40 notify goroutines.
func goroutineBaseFixture(t *testing.T, dir string) {
	t.Helper()
	const src = "/home/ci/work/shop/shop/"
	park := []string{"runtime.gopark /usr/local/go/src/runtime/proc.go:462", "runtime.chanrecv /usr/local/go/src/runtime/chan.go:667", "runtime.chanrecv1 /usr/local/go/src/runtime/chan.go:509"}
	notify := append(park, "main.notify "+src+"notify.go:85", "main.(*Server).handleUpload.func1 "+src+"upload.go:77")
	gr := newFixture(goroutineProfile())
	for i := range 5 {
		gr.sample([]int64{1}, map[string][]string{"request_id": {fmt.Sprintf("req-%03d", i+1)}, "route": {"/upload"}}, notify...)
	}
	gr.sample([]int64{1}, nil, "runtime.gopark /usr/local/go/src/runtime/proc.go:462", "main.main "+src+"main.go:30", "runtime.main /usr/local/go/src/runtime/proc.go:290")
	gr.sample([]int64{1}, nil, "runtime.gopark /usr/local/go/src/runtime/proc.go:462", "time.Sleep /usr/local/go/src/runtime/time.go:363", "main.flushLoop "+src+"flush.go:15")
	gr.write(t, filepath.Join(dir, "goroutine-base.pb.gz"))
}

// TestAnalyzeGoroutineGrowthGolden pins the goroutine growth section and
// gate in text and JSON: 35 more notify goroutines and the 2 slow requests
// grew; the goroutines of the base did not.
func TestAnalyzeGoroutineGrowthGolden(t *testing.T) {
	goldenDir, err := filepath.Abs(filepath.Join("testdata", "analyze"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fixtures(t, dir)
	goroutineBaseFixture(t, dir)
	t.Chdir(dir)
	t.Setenv("NO_COLOR", "1")

	const name = "goroutine.base.fail-on-goroutine-growth"
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			code, stdout, stderr := ctxleak(t, "analyze", "goroutine.pb.gz", "--base", "goroutine-base.pb.gz",
				"--fail-on-goroutine-growth", "10", "--format", format)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
			}
			golden(t, goldenDir, name+"."+format, stdout)
			want := "ctxleak: +37 goroutines against the base in 2 groups that grew, at or over the limit of 10 (--fail-on-goroutine-growth 10)\n"
			if stderr != want {
				t.Errorf("stderr %q, want %q", stderr, want)
			}
		})
	}
	t.Run("under the limit", func(t *testing.T) {
		code, _, stderr := ctxleak(t, "analyze", "goroutine.pb.gz", "--base", "goroutine-base.pb.gz",
			"--fail-on-goroutine-growth", "38")
		if code != 0 || stderr != "" {
			t.Errorf("exit %d, stderr %q; want 0 and nothing", code, stderr)
		}
	})
}

// TestAnalyzeFailOnGoroutineGrowth runs a real server under a real client
// load, with a goroutine profile taken before the load as the base and one
// taken after by URL: the server that leaves a goroutine behind per request
// trips --fail-on-goroutine-growth, the same server without the leak
// passes. The limit is far above the handful of connection goroutines that
// may still be winding down, and far below the leak's one per request.
func TestAnalyzeFailOnGoroutineGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a server")
	}
	const requests, limit = 100, 50
	bin := profilestest.Build(t)
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"leak", []string{"-leak", "-payload", "1024"}, 1},
		{"no leak", []string{"-payload", "1024"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := bin.Start(t, tt.args...)
			base := filepath.Join(t.TempDir(), "goroutine-base.pb.gz")
			srv.Save(t, "/debug/pprof/goroutine", base)
			srv.Load(t, requests, 8)
			code, stdout, stderr := ctxleak(t, "analyze", "--base", base, srv.URL+"/debug/pprof/goroutine",
				"--fail-on-goroutine-growth", fmt.Sprint(limit), "--format", "json")
			var doc struct {
				Goroutines struct {
					Base struct {
						Growth int64 `json:"growth_count"`
						Groups []struct {
							Start struct {
								Function string `json:"function"`
							} `json:"start"`
							Growth int64 `json:"growth_count"`
						} `json:"groups"`
					} `json:"base"`
				} `json:"goroutines"`
				Result string `json:"result"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("exit %d; stdout is not JSON (%v); stderr:\n%s", code, err, stderr)
			}
			g := doc.Goroutines.Base
			t.Logf("growth %+d in %d groups; exit %d", g.Growth, len(g.Groups), code)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.code == 1 {
				if len(g.Groups) == 0 || g.Groups[0].Start.Function != "main.notify" || g.Groups[0].Growth != requests {
					t.Errorf("top group %+v, want main.notify grown by %d", g.Groups, requests)
				}
				if doc.Result != "fail" || !strings.HasSuffix(stderr, fmt.Sprintf("(--fail-on-goroutine-growth %d)\n", limit)) {
					t.Errorf("result %q, stderr %q", doc.Result, stderr)
				}
			}
			if tt.code == 0 && (doc.Result != "pass" || stderr != "") {
				t.Errorf("result %q, stderr %q", doc.Result, stderr)
			}
		})
	}
}
