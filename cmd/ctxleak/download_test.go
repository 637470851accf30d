package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/watch"
)

// holdDumpPayload holds a payload for the dump TestHoldersURL downloads.
//
//go:noinline
func holdDumpPayload(p []byte, stop <-chan struct{}) {
	<-stop
	runtime.KeepAlive(p)
}

// serveWatch serves a watch.Handler of this process with the raw dump
// endpoint on 127.0.0.1 and returns the endpoint's URL.
func serveWatch(t *testing.T) string {
	t.Helper()
	w := watch.New(watch.Options{AllowHeapDump: true})
	t.Cleanup(func() { w.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: w.Handler()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/debug/ctxleak/heapdump"
}

func TestHoldersURL(t *testing.T) {
	url := serveWatch(t)
	stop := make(chan struct{})
	defer close(stop)
	go holdDumpPayload(make([]byte, 2<<20), stop)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	code, stdout, stderr := ctxleak(t, "holders", url, "--binary", exe, "--min-size", "2MiB")
	if code != 1 || !strings.Contains(stdout, "holdDumpPayload") || !strings.Contains(stdout, url) {
		t.Errorf("exit %d, want 1 with holdDumpPayload and the URL in the report\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "ctxleak-holders-*")); len(left) != 0 {
		t.Errorf("the downloaded dump is left: %v", left)
	}

	t.Run("other binary", func(t *testing.T) {
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		// A server each: one that a refused download left streaming its
		// dump answers 429 until it notices.
		code, stdout, stderr := ctxleak(t, "holders", serveWatch(t), "--binary", goBin)
		if code != 2 || !strings.Contains(stderr, "build ID") || stdout != "" {
			t.Errorf("exit %d, want 2 with the build IDs; stdout %q, stderr %q", code, stdout, stderr)
		}
	})
	t.Run("too large", func(t *testing.T) {
		code, _, stderr := ctxleak(t, "holders", serveWatch(t), "--max-dump-size", "1KiB")
		if code != 2 || !strings.Contains(stderr, "--max-dump-size 1KiB") {
			t.Errorf("exit %d, want 2 naming --max-dump-size; stderr %q", code, stderr)
		}
	})
	t.Run("endpoint off", func(t *testing.T) {
		w := watch.New(watch.Options{})
		defer w.Close()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: w.Handler()}
		go srv.Serve(ln)
		defer srv.Close()
		code, _, stderr := ctxleak(t, "holders", "http://"+ln.Addr().String()+"/debug/ctxleak/heapdump")
		if code != 2 || !strings.Contains(stderr, "404") {
			t.Errorf("exit %d, want 2 with the 404; stderr %q", code, stderr)
		}
	})
}
