package webview

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
)

//go:embed assets
var assets embed.FS

// pages returns the pages, each a template of assets/ with the layout,
// parsed on first use rather than when the package starts: every ctxleak
// command links this package, and parsing took 1.2 ms of each start.
var pages = sync.OnceValue(func() map[string]*template.Template {
	m := map[string]*template.Template{}
	for _, name := range []string{"groups", "tree", "node", "roots", "treemap"} {
		m[name] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(assets, "assets/layout.html", "assets/"+name+".html"))
	}
	return m
})

// funcs are the functions the templates call.
var funcs = template.FuncMap{
	"bytes":     func(n uint64) string { return bytesize.Format(int64(min(n, 1<<63-1))) },
	"pos":       posString,
	"nodeURL":   func(v heapdump.NodeID) string { return "/node/" + strconv.FormatUint(uint64(v), 10) },
	"objectURL": func(addr string) string { return "/object/" + addr },
	"holderURL": holderURL,
	"short":     func(h heap.Holder) string { return h.Short() },
	"shortG":    func(g *heap.Group) string { return g.Short() },
	"add":       func(a, b int) int { return a + b },
	"objects":   func(n uint64) string { return english.Plural(int(min(n, 1<<31)), "object") },
	"pct": func(part, whole uint64) string {
		if whole == 0 {
			return "0%"
		}
		return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 1, 64) + "%"
	},
	"textX": func(x float64) float64 { return x + 4 },
	"textY": func(y float64) float64 { return y + 13 },
	"f1":    func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"fits": func(r rect, text string) bool {
		return r.H >= 14 && r.W >= float64(7*min(len(text), 12))
	},
	"clip": func(r rect, text string) string {
		n := int(r.W / 7)
		if n <= 1 {
			return ""
		}
		if len(text) > n {
			return text[:max(n-1, 0)] + "…"
		}
		return text
	},
}

// posString formats a source position, "" for nil.
func posString(p *binsym.Position) string {
	if p == nil {
		return ""
	}
	return p.String()
}

// holderURL links a holder to its row of the roots page.
func holderURL(h heap.Holder) string {
	switch h.Kind {
	case heapdump.RootFrame, heapdump.RootGoroutine, heapdump.RootDefer, heapdump.RootPanic:
		if h.Goroutine != 0 {
			return "/roots#g" + strconv.FormatUint(h.Goroutine, 10)
		}
	case heapdump.RootGlobal:
		return "/roots#global-" + h.Global
	case heapdump.RootTimer:
		return "/roots#timers"
	case heapdump.RootFinalizer:
		return "/roots#finalizers"
	}
	return "/roots#others"
}

// routes maps the paths of the pages, assets and API documents.
func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err)
	}
	m.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", s.page("groups", s.groupsData))
	m.HandleFunc("GET /tree", s.page("tree", s.treeData))
	m.HandleFunc("GET /node/{id}", s.page("node", s.nodeData))
	m.HandleFunc("GET /object/{addr}", s.page("node", s.nodeData))
	m.HandleFunc("GET /roots", s.page("roots", s.rootsData))
	m.HandleFunc("GET /treemap", s.page("treemap", s.treemapData))

	m.HandleFunc("GET /api/report", s.api("", func(r *http.Request) (any, error) { return s.holders() }))
	m.HandleFunc("GET /api/children/{id}", s.api("ctxleak.web.children/v1", s.childrenData))
	m.HandleFunc("GET /api/node/{id}", s.api("ctxleak.web.node/v1", s.nodeData))
	m.HandleFunc("GET /api/object/{addr}", s.api("ctxleak.web.node/v1", s.nodeData))
	m.HandleFunc("GET /api/roots", s.api("ctxleak.web.roots/v1", s.rootsData))
	m.HandleFunc("GET /api/treemap", s.api("ctxleak.web.treemap/v1", s.treemapData))
	return m
}

// httpError is an error with the status a request gets for it.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// notFound and badRequest are the errors of unknown nodes and bad
// parameters.
func notFound(format string, args ...any) error {
	return &httpError{http.StatusNotFound, fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// dataFunc computes what a page or document shows. The server's lock is
// held while it runs.
type dataFunc func(r *http.Request) (any, error)

// pageData is what the layout gets: the page's data and the dump's title.
type pageData struct {
	Title string
	Page  string
	Data  any
}

// page serves the HTML page name with the data of fn.
func (s *Server) page(name string, fn dataFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		data, err := fn(r)
		var buf bytes.Buffer
		if err == nil {
			err = pages()[name].Execute(&buf, pageData{Title: s.opts.Title, Page: name, Data: data})
		}
		s.mu.Unlock()
		if err != nil {
			status := http.StatusInternalServerError
			var he *httpError
			if errors.As(err, &he) {
				status = he.status
			}
			http.Error(w, quoteASCII(err.Error()), status)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(buf.Bytes())
	}
}

// api serves the JSON document of fn, with "schema" first (unless the
// document has its own, as the report does).
func (s *Server) api(schema string, fn dataFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		data, err := fn(r)
		var b []byte
		if err == nil {
			b, err = json.Marshal(data)
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			status := http.StatusInternalServerError
			var he *httpError
			if errors.As(err, &he) {
				status = he.status
			}
			w.WriteHeader(status)
			b, _ = json.Marshal(struct {
				Schema string `json:"schema"`
				Error  string `json:"error"`
			}{"ctxleak.web.error/v1", err.Error()})
			w.Write(append(b, '\n'))
			return
		}
		if schema != "" && len(b) > 2 && b[0] == '{' {
			head, _ := json.Marshal(schema)
			b = append(append([]byte(`{"schema":`), head...), append([]byte{','}, b[1:]...)...)
		}
		w.Write(append(b, '\n'))
	}
}

// nodeParam returns the node a request names: /…/{id} with a node number,
// or /…/{addr} with the address of (or into) an object.
func (s *Server) nodeParam(r *http.Request) (heapdump.NodeID, error) {
	g := s.an.Graph()
	if addr := r.PathValue("addr"); addr != "" {
		a, err := strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64)
		if err != nil {
			return 0, badRequest("bad object address %s: want hexadecimal such as 0xc000123400", quoteASCII(addr))
		}
		v, ok := g.Find(a)
		if !ok {
			return 0, notFound("no object at %#x in the dump", a)
		}
		return v, nil
	}
	id := r.PathValue("id")
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil || n >= uint64(g.NumNodes()) {
		return 0, notFound("no node %s: nodes are numbered 0 to %d", quoteASCII(id), g.NumNodes()-1)
	}
	return heapdump.NodeID(n), nil
}

// intParam returns the non-negative integer query parameter name, def when
// absent.
func intParam(r *http.Request, name string, def, maxV int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxV {
		return 0, badRequest("bad %s=%s: want 0 to %d", name, quoteASCII(v), maxV)
	}
	return n, nil
}

// groupsView is the groups page: the report.
type groupsView struct{ Report *heap.Report }

func (s *Server) groupsData(*http.Request) (any, error) {
	rep, err := s.holders()
	if err != nil {
		return nil, err
	}
	return groupsView{rep}, nil
}

// treeView is the dominator tree page: its top, the roots' children.
type treeView struct {
	Top      nodeRow
	Children childrenView
}

func (s *Server) treeData(*http.Request) (any, error) {
	sr := s.an.Graph().SuperRoot()
	return treeView{Top: rows(s.an.Nodes([]heapdump.NodeID{sr}))[0], Children: s.children(sr, 0, s.pageSize)}, nil
}

func (s *Server) nodeData(r *http.Request) (any, error) {
	v, err := s.nodeParam(r)
	if err != nil {
		return nil, err
	}
	return s.nodePage(v)
}

func (s *Server) childrenData(r *http.Request) (any, error) {
	v, err := s.nodeParam(r)
	if err != nil {
		return nil, err
	}
	offset, err := intParam(r, "offset", 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	limit, err := intParam(r, "limit", s.pageSize, maxPageSize)
	if err != nil {
		return nil, err
	}
	return s.children(v, offset, limit), nil
}

func (s *Server) rootsData(*http.Request) (any, error) { return s.rootsPage() }

func (s *Server) treemapData(*http.Request) (any, error) {
	if s.treemap == nil {
		rep, err := s.holders()
		if err != nil {
			return nil, err
		}
		s.treemap = newTreemap(rep)
	}
	return s.treemap, nil
}

// quoteASCII quotes text from a request or the dump for an error message:
// control and non-ASCII characters escaped.
func quoteASCII(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return strconv.QuoteToASCII(s)
}
