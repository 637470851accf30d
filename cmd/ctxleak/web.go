package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"runtime"

	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/webview"
)

// serveWeb serves the web view of an on --http until ctx is done (Ctrl-C),
// and then returns ctx's cause, which exits 130 or 143.
func (a *app) serveWeb(ctx context.Context, an *heap.Analysis, f holdersFlags, source string, opts ...heap.Option) error {
	addr, err := webAddr(f.http)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageErrorf("--http %s: %v", f.http, err)
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(a.stdout, "ctxleak: serving the web view of %s at %s (Ctrl-C stops)\n", source, url)
	if !f.noBrowser {
		openBrowser(url)
	}
	srv := webview.New(an, webview.Options{Title: source, ReportOptions: opts})
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("--http %s: %w", f.http, err)
	}
	return context.Cause(ctx)
}

// webAddr checks the --http address, [HOST]:PORT, and gives it the
// loopback host when it has none.
func webAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", usageErrorf("invalid --http %q: want [HOST]:PORT such as :8080, :0 or 127.0.0.1:8080", s)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// openBrowser opens url in the desktop's browser, if there is one: best
// effort, errors ignored.
func openBrowser(url string) {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		return
	}
	cmd := exec.Command(name, url)
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}
