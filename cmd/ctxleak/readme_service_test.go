package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The README's running service for TestREADME: cmd/ctxleak/testdata/uploads.

// startService builds cmd/ctxleak/testdata/uploads from the clone as
// ./app of the service directory, once, and starts it with args on a free
// port of 127.0.0.1; it stops when the test ends. It returns the service's
// host and port, and its stderr (where it writes its watch reports) so far.
func startService(t *testing.T, r *readmeRun, args ...string) (string, func() string) {
	t.Helper()
	dir := r.dirs["service"]
	if _, err := os.Stat(filepath.Join(dir, "app")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		build := exec.Command("go", "build", "-o", filepath.Join(dir, "app"), "./cmd/ctxleak/testdata/uploads")
		build.Dir, build.Env = r.dirs["root"], r.env
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building the service: %v\n%s", err, out)
		}
	}
	cmd := exec.Command("./app", append(args, "-until-eof")...)
	cmd.Dir, cmd.Env = dir, r.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the service exits when its standard input closes
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the service printed no address: %v", err)
	}
	go io.Copy(io.Discard, stdout)
	return strings.TrimPrefix(strings.TrimSpace(line), "http://"), stderr.String
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// watchReport checks the README's watch report sample against a real
// report: a second service, with a grace of a second, gets as many uploads
// as the sample counts, and writes its report on stderr.
func (r *readmeRun) watchReport(b readmeBlock) {
	t := r.t
	t.Helper()
	m := regexp.MustCompile(`(\d+) values outlived their grace`).FindStringSubmatch(strings.Join(b.report, "\n"))
	if m == nil {
		t.Fatalf("README.md:%d: the watch report sample says no \"N values outlived their grace\"", b.line)
	}
	n, _ := strconv.Atoi(m[1])
	host, stderr := startService(t, r, "-grace", "1s")
	// One connection per upload, closed after it, as curl makes them (an
	// open connection would hold part of what the contexts retain).
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range n {
		resp, err := client.Post("http://"+host+"/upload", "text/plain", strings.NewReader(fmt.Sprintf("upload %d", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// The report is complete when it has a section per value, each
	// starting with the value's quoted label.
	complete := func() bool {
		got := stderr()
		return strings.Contains(got, "outlived") && strings.Count(got, "\n\"") >= n && strings.HasSuffix(got, "\n")
	}
	deadline := time.Now().Add(60 * time.Second)
	for d := 10 * time.Millisecond; !complete(); d = min(2*d, time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("no complete watch report 60 s after %d uploads; stderr:\n%s", n, stderr())
		}
		time.Sleep(d)
	}
	got := stderr()
	have := map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		have[shape(l)] = true
	}
	for _, l := range b.report {
		if l != "..." && strings.TrimSpace(l) != "" && !have[shape(l)] {
			t.Errorf("README.md:%d: the watch report sample has a line the service no longer writes:\n  %s\nwhat it writes today:\n%s", b.line, l, got)
			return
		}
	}
	if out := os.Getenv("CTXLEAK_README_OUT"); out != "" {
		os.WriteFile(filepath.Join(out, b.name+".txt"), []byte(got), 0o644)
	}
}
