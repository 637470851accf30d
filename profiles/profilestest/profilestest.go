// Package profilestest runs a real net/http server that leaks, or does not
// leak, per-request memory, for the tests of the profiles package and of
// "ctxleak analyze". The server is profiles/testdata/leakserver,
// built with the go command and run in a child process, so its profiles
// are its own.
package profilestest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/internal/testbuild"
)

const pkg = "github.com/ctxleak/ctxleak/profiles/testdata/leakserver"

// Server is a running leakserver.
type Server struct {
	// URL is the server's base URL, such as http://127.0.0.1:41234.
	URL   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// Binary is a built leakserver executable.
type Binary struct {
	path string
}

// Build builds leakserver into a temporary directory of t, so that the
// subtests of t can start as many servers as they need from one build. It
// needs the go command and this module's source.
func Build(t testing.TB) *Binary {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "leakserver")
	if out, err := testbuild.Build(bin, nil, pkg); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return &Binary{path: bin}
}

// Start builds leakserver and starts it with args (such as "-leak"). The
// server stops when the test ends.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	return Build(t).Start(t, args...)
}

// Start starts the server with args (such as "-leak"). The server stops
// when the test ends.
func (b *Binary) Start(t testing.TB, args ...string) *Server {
	t.Helper()
	cmd := exec.Command(b.path, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting leakserver: %v", err)
	}
	s := &Server{cmd: cmd, stdin: stdin}
	t.Cleanup(s.stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("leakserver printed no address: %v", err)
	}
	s.URL = strings.TrimSpace(line)
	return s
}

// stop closes the server's standard input, which makes it exit, and waits
// for it; it kills the server if it has not exited within 10 seconds.
func (s *Server) stop() {
	_ = s.stdin.Close()
	done := make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// Load sends n requests to /upload from workers concurrent clients, and
// waits for every answer. It closes its idle connections at the end, so
// the server is left with none in use.
func (s *Server) Load(t testing.TB, n, workers int) {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	jobs := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range jobs {
				errs <- s.get(client, "/upload")
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (s *Server) get(client *http.Client, path string) error {
	resp, err := client.Get(s.URL + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return nil
}

// Save fetches path (such as "/debug/pprof/heap?gc=1") and writes the
// answer to file.
func (s *Server) Save(t testing.TB, path, file string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %s", path, err, resp.Status)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
