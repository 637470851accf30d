package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/selfdump"
)

// StatusSchema names the JSON document of the status endpoint.
const StatusSchema = "ctxleak.watch/v1"

// BuildIDHeader is the response header of the heapdump endpoint that
// carries the Go build ID of the executable that wrote the dump.
const BuildIDHeader = "Ctxleak-Build-Id"

// Handler returns the watcher's HTTP endpoints, to mount at a path ending
// in a slash such as "/debug/ctxleak/"; each is chosen by the last segment
// of the request path:
//
//   - "" (the mount path itself): an HTML page with the counts per label,
//     the values alive now and the last reports with their holders;
//   - "status": the same as JSON, the document "ctxleak.watch/v1";
//   - "holders?min_size=1MiB&format=text|json": takes a heap dump now,
//     analyses it in the process and returns the holder report (no object
//     bytes leave the process);
//   - "heapdump": the raw heap dump, only with Options.AllowHeapDump, with
//     the executable's build ID in the header BuildIDHeader.
//
// A dump stops the world while it is written (about 0.3 s per 100 MiB of
// heap); one is taken at a time, and a request for another meanwhile gets
// 429 Too Many Requests. Every response has Cache-Control: no-store. Clients
// that are not on a loopback address get 403 Forbidden unless
// Options.AllowRemote is set: a dump holds every secret of the process, so
// put the handler behind the service's admin authentication too.
func (w *Watcher) Handler() http.Handler {
	return http.HandlerFunc(w.serveHTTP)
}

func (w *Watcher) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Cache-Control", "no-store")
	if !w.opts.AllowRemote && !isLoopback(r.RemoteAddr) {
		http.Error(rw, "ctxleak: loopback clients only (Options.AllowRemote)", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		http.Error(rw, "ctxleak: GET only", http.StatusMethodNotAllowed)
		return
	}
	switch endpoint(r.URL.Path) {
	case "":
		w.serveIndex(rw)
	case "status":
		w.serveStatus(rw)
	case "holders":
		w.serveHolders(rw, r)
	case "heapdump":
		w.serveHeapDump(rw)
	default:
		http.NotFound(rw, r)
	}
}

// endpoint returns the last segment of path, "" when path ends in a slash.
func endpoint(path string) string {
	return path[strings.LastIndexByte(path, '/')+1:]
}

// isLoopback reports whether the remote address addr is on a loopback
// interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Status is the document of the status endpoint.
type Status struct {
	Schema string `json:"schema"`
	Stats
	// AliveValues are the values that outlived their grace and are alive
	// now (at most 20).
	AliveValues []Value `json:"alive_values"`
	// Reports are the last reports, newest first.
	Reports []Report `json:"reports"`
	// LeakCheck is the last goroutineleak profile's check, nil before
	// the first.
	LeakCheck *LeakCheck `json:"leak_check"`
}

// status returns the status now.
func (w *Watcher) status() Status {
	st := Status{Schema: StatusSchema, Stats: w.Stats(), AliveValues: []Value{}, Reports: []Report{}}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.outlived[:min(len(w.outlived), maxReportValues)] {
		st.AliveValues = append(st.AliveValues, e.value())
	}
	for i := len(w.reports) - 1; i >= 0; i-- {
		st.Reports = append(st.Reports, w.reports[i])
	}
	if w.lastLeak != nil {
		c := *w.lastLeak
		st.LeakCheck = &c
	}
	return st
}

func (w *Watcher) serveStatus(rw http.ResponseWriter) {
	rw.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(rw)
	enc.SetIndent("", "  ")
	enc.Encode(w.status())
}

var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html><head><title>ctxleak watch</title>
<style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}pre{background:#f4f4f4;padding:6px}</style>
</head><body>
<h1>ctxleak watch</h1>
<p>{{.Watched}} values watched, {{.Outlived}} outlived their grace, {{.Stats.Alive}} of them alive now, {{.Pending}} pending; {{.Stats.Reports}} reports.
<a href="status">status</a> (JSON) · <a href="holders">holders</a> (takes a heap dump now)</p>
<table><tr><th>label</th><th>watched</th><th>outlived</th><th>alive</th></tr>
{{range .Labels}}<tr><td>{{.Label}}</td><td>{{.Watched}}</td><td>{{.Outlived}}</td><td>{{.Alive}}</td></tr>
{{end}}</table>
{{with .LeakCheck}}<h2>Leaked goroutines</h2><p>{{.Summary}} ({{.Time.Format "2006-01-02T15:04:05Z07:00"}})</p>{{end}}
{{with .AliveValues}}<h2>Alive now</h2><ul>{{range .}}<li>{{.Label}}: {{.Type}} at {{.Addr}}</li>{{end}}</ul>{{end}}
<h2>Last reports</h2>
{{range .Texts}}<pre>{{.}}</pre>{{else}}<p>none</p>{{end}}
</body></html>
`))

func (w *Watcher) serveIndex(rw http.ResponseWriter) {
	st := w.status()
	texts := make([]string, len(st.Reports))
	for i, rep := range st.Reports {
		var b strings.Builder
		rep.WriteText(&b)
		texts[i] = b.String()
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	indexPage.Execute(rw, struct {
		Status
		Texts []string
	}{st, texts})
}

// acquire takes the dump token, or answers 429 and returns false.
func (w *Watcher) acquire(rw http.ResponseWriter) bool {
	select {
	case w.busy <- struct{}{}:
		return true
	default:
		rw.Header().Set("Retry-After", "1")
		http.Error(rw, "ctxleak: a heap dump is being taken; try again", http.StatusTooManyRequests)
		return false
	}
}

func (w *Watcher) serveHolders(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	minSize := uint64(heap.DefaultMinSize)
	if s := q.Get("min_size"); s != "" {
		n, err := bytesize.Parse(s)
		if err != nil || n <= 0 {
			http.Error(rw, fmt.Sprintf("ctxleak: bad min_size %q: want a size such as 64KiB", s), http.StatusBadRequest)
			return
		}
		minSize = uint64(n)
	}
	format := q.Get("format")
	if format == "" {
		format = "text"
	}
	if format != "text" && format != "json" {
		http.Error(rw, fmt.Sprintf("ctxleak: bad format %q: want text or json", format), http.StatusBadRequest)
		return
	}
	if !w.acquire(rw) {
		return
	}
	defer func() { <-w.busy }()
	var rep *heap.Report
	_, err := w.withDump(false, func(_ selfdump.Dump, a *heap.Analysis) error {
		var err error
		rep, err = a.Holders(heap.MinSize(minSize))
		return err
	})
	if err != nil {
		http.Error(rw, "ctxleak: "+err.Error(), dumpErrorStatus(err))
		return
	}
	if format == "json" {
		rw.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(rw)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return
	}
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rep.WriteText(rw, heap.PlainStyle{})
}

func (w *Watcher) serveHeapDump(rw http.ResponseWriter) {
	if !w.opts.AllowHeapDump {
		http.Error(rw, "ctxleak: the heapdump endpoint is off (Options.AllowHeapDump)", http.StatusNotFound)
		return
	}
	if !w.acquire(rw) {
		return
	}
	defer func() { <-w.busy }()
	exe, err := os.Executable()
	var id string
	if err == nil {
		id, err = binsym.GoBuildID(exe)
	}
	if err != nil {
		http.Error(rw, "ctxleak: no build ID for the executable: "+err.Error(), http.StatusInternalServerError)
		return
	}
	dir, err := os.MkdirTemp("", "ctxleak-watch-*")
	if err != nil {
		http.Error(rw, "ctxleak: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer os.RemoveAll(dir)
	d, err := selfdump.Write(dir, "ctxleak-*.heapdump")
	if err == nil {
		err = streamFile(rw, d, id)
	}
	if err != nil && !errors.Is(err, errStarted) {
		http.Error(rw, "ctxleak: "+err.Error(), dumpErrorStatus(err))
	}
}

// dumpErrorStatus is the HTTP status for an error from a heap dump of the
// process: 409 Conflict when the dump was refused because goroutines are
// marked leaked (the process's state forbids it, not the server failing),
// 500 otherwise.
func dumpErrorStatus(err error) int {
	if errors.Is(err, selfdump.ErrLeakedGoroutines) {
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// errStarted wraps an error that came after the response started.
var errStarted = errors.New("response started")

// streamFile sends the dump d.
func streamFile(rw http.ResponseWriter, d selfdump.Dump, buildID string) error {
	f, err := os.Open(d.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := rw.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="ctxleak.heapdump"`)
	h.Set("Content-Length", fmt.Sprint(d.Size))
	h.Set(BuildIDHeader, buildID)
	if _, err := io.Copy(rw, f); err != nil {
		return fmt.Errorf("%w: %v", errStarted, err)
	}
	return nil
}

// value describes e for the status.
func (e expectation) value() Value {
	return Value{Label: e.label.name, Type: e.typ.String(), Addr: fmt.Sprintf("0x%x", e.addr)}
}
