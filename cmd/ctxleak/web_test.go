package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// holders --http serves the web view on loopback, prints its URL, and
// exits 130 on SIGINT.
func TestHoldersHTTP(t *testing.T) {
	dump, exe := holdersDump(t, "goroutine")
	// A port that cannot be listened on is refused after the analysis.
	code, _, stderr0 := ctxleak(t, "holders", dump, "--binary", exe, "--http", "127.0.0.1:99999")
	if code != 2 || !strings.Contains(stderr0, "--http 127.0.0.1:99999: ") {
		t.Errorf("--http 127.0.0.1:99999: exit %d, stderr %q", code, stderr0)
	}
	cmd := exec.Command("ctxleak", "holders", dump, "--binary", exe, "--http", ":0", "--no-browser") // the test binary, on PATH (TestMain)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Wait()
		t.Fatalf("reading the URL: %v; stderr %q", err, stderr.String())
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(line)
	if url == "" {
		t.Fatalf("no loopback URL in %q", line)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "frame main.waitThenUse") {
		t.Errorf("GET %s: status %d, page lacks the holder:\n%s", url, resp.StatusCode, body)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d after SIGINT, want 130; stderr %q", code, stderr.String())
	}
	if stderr.String() != "ctxleak: interrupted\n" {
		t.Errorf("stderr %q", stderr.String())
	}
	if _, err := http.Get(url); err == nil {
		t.Errorf("%s still answers", url)
	}
}

// Bad --http flags are refused before the dump is read.
func TestHoldersHTTPBadFlags(t *testing.T) {
	dump := filepath.Join("testdata", "dumps", "empty.dump")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "8080"}, `invalid --http "8080": want [HOST]:PORT`},
		{[]string{"--http", ":0", "--format", "json"}, "--http serves the web view: it takes no --format or -o"},
	} {
		code, _, stderr := ctxleak(t, append([]string{"holders", dump}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
