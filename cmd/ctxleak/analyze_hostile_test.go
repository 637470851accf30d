package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeCaps: past a cap, analyze exits 2 naming the cap and the
// flag that raises it; the flag raises it.
func TestAnalyzeCaps(t *testing.T) {
	dir := t.TempDir()
	var zeros bytes.Buffer
	zw := gzip.NewWriter(&zeros)
	zw.Write(make([]byte, 4<<20))
	zw.Close()
	gz := filepath.Join(dir, "zeros.pb.gz")
	if err := os.WriteFile(gz, zeros.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	fixtures(t, dir)
	heap := filepath.Join(dir, "heap.pb.gz")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"decompressed", []string{gz, "--max-profile-size", "1MiB"},
			gz + ": the decompressed data is over the profile size limit of 1.0 MiB (raise it with --max-profile-size, now 1MiB)"},
		{"file", []string{heap, "--max-profile-size", "100B"},
			heap + ": the file is "},
		{"stdin", []string{"-", "--max-profile-size", "1KiB"},
			"-: the input is over the profile size limit of 1.0 KiB (raise it with --max-profile-size, now 1KiB)"},
		{"bad flag", []string{heap, "--max-profile-size", "0"}, "invalid --max-profile-size 0"},
		{"flag too large", []string{heap, "--max-profile-size", "2GiB"}, "invalid --max-profile-size 2GiB: want a positive size such as 256MiB, under 2GiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ctxleakStdin(t, bytes.NewReader(zeros.Bytes()), append([]string{"analyze"}, tt.args...)...)
			if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "ctxleak: "+tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, tt.want)
			}
		})
	}
	code, _, stderr := ctxleak(t, "analyze", heap, "--max-profile-size", "1MiB")
	if code != exitClean {
		t.Errorf("a profile under --max-profile-size: exit %d, stderr %q", code, stderr)
	}
}

// TestAnalyzeHostileValues: a negative in-use value is refused, never
// passed under a gate.
func TestAnalyzeHostileValues(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(heapProfile())
	f.sample([]int64{40, 40 * 65536}, nil, "main.(*Server).handleUpload /src/upload.go:69", "net/http.HandlerFunc.ServeHTTP /usr/local/go/src/net/http/server.go:2286")
	f.sample([]int64{1, -40 * 65536}, nil, "main.(*Server).handleUpload /src/upload.go:70", "net/http.HandlerFunc.ServeHTTP /usr/local/go/src/net/http/server.go:2286")
	name := filepath.Join(dir, "negative.pb.gz")
	f.write(t, name)
	code, stdout, stderr := ctxleak(t, "analyze", name, "--fail-on-retained", "1MiB")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, name+": sample 1 has a negative inuse_space value (-2621440)") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestAnalyzeGitHubForgery: a label value or function name that reads as
// a workflow command cannot run as one: a text report with a line that
// would is wrapped in ::stop-commands:: (internal/textsafe tests that),
// and annotations escape their data.
func TestAnalyzeGitHubForgery(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(goroutineProfile())
	forged := "::error file=main.go::forged"
	f.sample([]int64{3}, map[string][]string{"request_id": {forged}, "::warning::k": {"v\n::error::x"}},
		"runtime.gopark /usr/local/go/src/runtime/proc.go:462", "main.wait\x1b[2J /src/wait.go:9")
	name := filepath.Join(dir, "g.pb.gz")
	f.write(t, name)
	code, stdout, stderr := ctxleak(t, "analyze", name, "--show-labels", "--fail-on-goroutines", "0", "--format", "github", "--full-stack")
	if code != exitFindings {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if strings.ContainsAny(stdout, "\x1b\r") {
		t.Errorf("a control character reached the output:\n%q", stdout)
	}
	stopped := ""
	for line := range strings.Lines(stdout) {
		l := strings.TrimSpace(line)
		switch {
		case stopped != "" && l == "::"+stopped+"::":
			stopped = ""
		case stopped != "":
		case strings.HasPrefix(l, "::stop-commands::"):
			stopped = strings.TrimPrefix(l, "::stop-commands::")
		case strings.HasPrefix(l, "::") && !strings.HasPrefix(l, "::error title=ctxleak") && !strings.HasPrefix(l, "::error file=/src/wait.go,"):
			t.Errorf("a line runs as a workflow command: %q", line)
		}
	}
	if stopped != "" {
		t.Errorf("commands stopped and never resumed:\n%s", stdout)
	}
	if !strings.Contains(stdout, "main.wait\\x1b[2J") {
		t.Errorf("the escaped function name is missing:\n%s", stdout)
	}
}
