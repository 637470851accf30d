package main

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAnalyzeHeapDump gives analyze real heap dumps, written by
// heap/testdata/holders, a small one and one over the 3.5 MiB at which the
// legacy text limit used to answer first: each input is told a heap dump
// from its first bytes, before any size or format limit, whatever way it
// comes (file, --base, standard input, URL, gzipped), exit 2.
func TestAnalyzeHeapDump(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a program that writes heap dumps")
	}
	small, _ := holdersDump(t, "none")
	big, _ := holdersDump(t, "three-uploads")
	for _, d := range []struct {
		path     string
		min, max int64
	}{{small, 0, 1 << 20}, {big, 3584 << 10, 1 << 40}} {
		if st, err := os.Stat(d.path); err != nil || st.Size() < d.min || st.Size() > d.max {
			t.Fatalf("%s: %v, size not within [%d, %d]: the test needs a small dump and one over 3.5 MiB", d.path, err, d.min, d.max)
		}
	}
	bigData, err := os.ReadFile(big)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bigData)
	zw.Close()
	gzPath := filepath.Join(t.TempDir(), "dump.gz")
	if err := os.WriteFile(gzPath, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(bigData)) // with Content-Length
	}))
	defer srv.Close()
	url := srv.URL + "/debug/ctxleak/heapdump"

	const dumpMsg = ": not a pprof profile; this is a Go heap dump: use ctxleak holders\n"
	for _, tt := range []struct {
		name  string
		stdin []byte
		args  []string
		want  string
	}{
		{"small", nil, []string{small}, small + dumpMsg},
		{"big", nil, []string{big}, big + dumpMsg},
		{"over --max-profile-size", nil, []string{"--max-profile-size", "1MiB", big}, big + dumpMsg},
		{"base", nil, []string{"--base", big, small}, small + dumpMsg},
		{"stdin", bigData, []string{"-"}, "-" + dumpMsg},
		{"url", nil, []string{"--max-profile-size", "1MiB", url}, url + dumpMsg},
		{"gzipped", nil, []string{"--max-profile-size", "1MiB", gzPath},
			gzPath + ": not a pprof profile; this is a gzipped Go heap dump: decompress it and use ctxleak holders\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ctxleakStdin(t, bytes.NewReader(tt.stdin), append([]string{"analyze"}, tt.args...)...)
			if code != 2 || stdout != "" || stderr != "ctxleak: "+tt.want {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, "ctxleak: "+tt.want)
			}
		})
	}
}
