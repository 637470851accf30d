package webview

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/testbuild"
	"github.com/ctxleak/ctxleak/internal/testexit"
)

// The tests browse one real heap dump, written by testdata/webprog, through
// one Server on 127.0.0.1: the API over plain HTTP, the pages in headless
// Chromium.

var (
	testURL  string         // the server's base URL, ending in "/"
	testAn   *heap.Analysis // the analysis it serves
	testExe  string         // webprog, which wrote the dump
	setupErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ctxleak-webview-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	setupErr = setup(ctx, dir, done)
	code := m.Run()
	cancel()
	if setupErr == nil {
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "Serve:", err)
			code = 1
		}
		testAn.Close()
	}
	os.RemoveAll(dir)
	testexit.Exit(code)
}

// setup builds webprog, writes its dump, analyses it and serves it until
// ctx is done; Serve's result goes to done.
func setup(ctx context.Context, dir string, done chan<- error) error {
	testExe = filepath.Join(dir, "webprog")
	if out, err := testbuild.Build(testExe, nil, "./testdata/webprog"); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	dump := filepath.Join(dir, "web.dump")
	if out, err := exec.Command(testExe, dump).CombinedOutput(); err != nil {
		return fmt.Errorf("webprog: %v\n%s", err, out)
	}
	bin, err := binsym.Open(testExe)
	if err != nil {
		return err
	}
	an, err := heap.Analyze(dump, bin)
	if err != nil {
		return err
	}
	testAn = an
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	testURL = "http://" + ln.Addr().String() + "/"
	srv := New(an, Options{Title: "web.dump", ReportOptions: []heap.Option{heap.MinSize(512 << 10)}})
	go func() { done <- srv.Serve(ctx, ln) }()
	return nil
}

// server returns the base URL of the test server, or fails the test.
func server(t *testing.T) string {
	t.Helper()
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return testURL
}
