package webview

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ctxleak/ctxleak/heap"
)

// Options configure a Server.
type Options struct {
	// Report is the holder report the groups and treemap pages show; when
	// nil the Server builds it on first use with ReportOptions.
	Report        *heap.Report
	ReportOptions []heap.Option
	// Title names the dump on every page (its path or URL); the dump's
	// file name when empty.
	Title string
}

// Server serves the web view of one heap.Analysis. Build one with New; its
// Handler serves the pages, Serve runs it on a listener.
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu       sync.Mutex // serializes every use of an and of the fields below
	an       *heap.Analysis
	report   *heap.Report
	roots    *rootsView
	treemap  *treemapView
	pageSize int // children per request of the dominator tree
}

// DefaultPageSize is how many children of a node of the dominator tree a
// page or a request of /api/children returns at most.
const DefaultPageSize = 200

// maxPageSize is the largest limit /api/children accepts.
const maxPageSize = 2000

// New returns a Server for an, and starts building the dominator tree's
// child lists in the background. The Server does not close an.
func New(an *heap.Analysis, opts Options) *Server {
	s := &Server{opts: opts, an: an, report: opts.Report, pageSize: DefaultPageSize}
	if s.opts.Title == "" {
		s.opts.Title = an.Graph().Name()
	}
	s.mux = s.routes()
	go an.PrepareTree() // for the tree pages; the groups page need not wait
	return s
}

// Handler returns the handler of every page, asset and API document.
func (s *Server) Handler() http.Handler { return s }

// ServeHTTP serves a request, refusing a Host that names neither a
// loopback address nor the listener's (against DNS rebinding) and setting
// headers that keep pages from loading anything from elsewhere.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !allowedHost(r) {
		http.Error(w, "webview: unexpected Host header "+quoteASCII(r.Host), http.StatusMisdirectedRequest)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// allowedHost reports whether the request's Host is a loopback name or
// address, or the address the request came in on.
func allowedHost(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	if host == "localhost" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return true
		}
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if ta, ok := la.(*net.TCPAddr); ok && ta.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}

// Serve serves on ln until ctx is done, then shuts the server down,
// letting requests in progress finish for up to a second. It returns nil
// after a shutdown, else the error that stopped serving.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// holders returns the holder report, built on first use. s.mu is held.
func (s *Server) holders() (*heap.Report, error) {
	if s.report == nil {
		rep, err := s.an.Holders(s.opts.ReportOptions...)
		if err != nil {
			return nil, err
		}
		s.report = rep
	}
	return s.report, nil
}
