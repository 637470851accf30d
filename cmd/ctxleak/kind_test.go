package main

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// TestHoldersTellsInputKind gives holders real profiles and a gzipped real
// heap dump: each refusal (exit 2) says what the input is, from its first
// bytes whatever its size, and what reads it.
func TestHoldersTellsInputKind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a program that writes heap dumps")
	}
	dir := t.TempDir()
	profile := func(name string, debug int) []byte {
		var b bytes.Buffer
		if err := pprof.Lookup(name).WriteTo(&b, debug); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gz := func(data []byte) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		return b.Bytes()
	}
	heapPB := profile("heap", 0)
	// A real profile followed by a second gzip member: past the size
	// under which holders parses a file to be sure it is a profile.
	padded := append(append([]byte(nil), heapPB...), gz(bytes.Repeat([]byte{0}, 1<<20))...)
	for len(padded) <= maxHintBytes {
		padded = append(padded, padded...)
	}
	small, _ := holdersDump(t, "none")
	dump, err := os.ReadFile(small)
	if err != nil {
		t.Fatal(err)
	}
	legacy := profile("heap", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(legacy))
	}))
	defer srv.Close()

	const legacyHint = "; this is a legacy text pprof profile: use ctxleak analyze"
	for _, tt := range []struct {
		name  string
		stdin []byte
		args  []string
		want  string
	}{
		{"gzipped profile", nil, []string{write("heap.pb.gz", heapPB)}, "; this is a pprof profile: use ctxleak analyze"},
		{"large gzipped profile", nil, []string{write("large.pb.gz", padded)}, "; this looks like a gzipped pprof profile (profile.proto): use ctxleak analyze"},
		{"legacy text", nil, []string{write("heap.txt", legacy)}, "; this is a pprof profile: use ctxleak analyze"},
		{"goroutine dump", nil, []string{write("goroutines.txt", profile("goroutine", 2))}, "; this is a goroutine dump (debug=2), not a heap dump"},
		{"gzipped dump", nil, []string{write("dump.gz", gz(dump))}, "; this is a gzipped Go heap dump: decompress it first"},
		{"stdin", legacy, []string{"-"}, legacyHint},
		{"url over --max-dump-size", nil, []string{"--max-dump-size", "1KiB", srv.URL + "/debug/ctxleak/heapdump"}, legacyHint},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ctxleakStdin(t, bytes.NewReader(tt.stdin), append([]string{"holders"}, tt.args...)...)
			if code != 2 || stdout != "" || !strings.HasSuffix(stderr, tt.want+"\n") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line ending %q", code, stdout, stderr, tt.want)
			}
		})
	}
}

// TestCostBaseTellsInputKind gives cost --base a real heap dump and real
// profiles: each is told from its first bytes, before the size limit of a
// cost report and the JSON decoder (exit 2, before any child runs).
func TestCostBaseTellsInputKind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a program that writes heap dumps")
	}
	big, _ := holdersDump(t, "three-uploads")
	dir := t.TempDir()
	var pb, txt bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&pb, 0); err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(&txt, 1); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct{ path, want string }{
		{big, "not a cost report; this is a Go heap dump: use ctxleak holders"},
		{write("heap.pb.gz", pb.Bytes()), "not a cost report (gzip data: decompress it first, or use ctxleak analyze for a profile)"},
		{write("heap.txt", txt.Bytes()), "not a cost report; this is a legacy text pprof profile: use ctxleak analyze"},
	} {
		code, stdout, stderr := ctxleak(t, "cost", "--quick", "--base", tt.path)
		if want := "ctxleak: --base " + tt.path + ": " + tt.want + "\n"; code != 2 || stdout != "" || stderr != want {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, want)
		}
	}
}
