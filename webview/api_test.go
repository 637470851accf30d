package webview

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// get fetches path from the test server and returns the status and body.
func get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(server(t) + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// getJSON fetches a document of the API into v and checks its schema.
func getJSON(t *testing.T, path, schema string, v any) {
	t.Helper()
	code, body := get(t, path)
	if code != http.StatusOK {
		t.Fatalf("%s: status %d: %s", path, code, body)
	}
	if !strings.HasPrefix(body, `{"schema":"`+schema+`",`) {
		t.Errorf("%s does not start with schema %s: %.80s", path, schema, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

type childrenDoc struct {
	Node     int `json:"node"`
	Total    int `json:"child_count"`
	Next     int `json:"next_offset"`
	Children []struct {
		ID       int    `json:"id"`
		Kind     string `json:"kind"`
		Label    string `json:"label"`
		Type     string `json:"type"`
		Retained uint64 `json:"retained_bytes"`
		Children int    `json:"child_count"`
		Root     *struct {
			Kind   string `json:"kind"`
			Global string `json:"global"`
		} `json:"root"`
	} `json:"children"`
}

// The API pages a node's children largest first, and the global slice of
// 300 sessions has more than a page.
func TestAPIChildren(t *testing.T) {
	sr := testAn.Graph().SuperRoot()
	var srDoc struct {
		Node struct {
			Kind  string `json:"kind"`
			Label string `json:"label"`
		} `json:"node"`
		Dominators []struct{} `json:"dominators"`
	}
	getJSON(t, "api/node/"+strconv.Itoa(int(sr)), "ctxleak.web.node/v1", &srDoc)
	if srDoc.Node.Kind != "roots" || srDoc.Node.Label != "all roots" || len(srDoc.Dominators) != 0 {
		t.Errorf("the super-root's document: %+v", srDoc)
	}
	var top childrenDoc
	getJSON(t, "api/children/"+strconv.Itoa(int(sr)), "ctxleak.web.children/v1", &top)
	if top.Total == 0 || len(top.Children) == 0 {
		t.Fatalf("the super-root has no children: %+v", top)
	}
	for i := 1; i < len(top.Children); i++ {
		if top.Children[i].Retained > top.Children[i-1].Retained {
			t.Errorf("children not largest first at %d: %d after %d", i, top.Children[i].Retained, top.Children[i-1].Retained)
		}
	}
	// Find main.sessions, then its slice, which dominates 300 sessions.
	var sessions int = -1
	for _, c := range top.Children {
		if c.Root != nil && c.Root.Global == "main.sessions" {
			sessions = c.ID
		}
	}
	if sessions < 0 {
		t.Fatalf("no main.sessions among the roots: %+v", top.Children)
	}
	var g childrenDoc
	getJSON(t, "api/children/"+strconv.Itoa(sessions), "ctxleak.web.children/v1", &g)
	if len(g.Children) != 1 || g.Children[0].Type != "[]*main.Session" {
		t.Fatalf("main.sessions children: %+v", g.Children)
	}
	slice := strconv.Itoa(g.Children[0].ID)
	var page childrenDoc
	getJSON(t, "api/children/"+slice+"?limit=100", "ctxleak.web.children/v1", &page)
	if page.Total != 300 || len(page.Children) != 100 || page.Next != 100 {
		t.Fatalf("first page: total %d, %d children, next %d; want 300, 100, 100", page.Total, len(page.Children), page.Next)
	}
	if c := page.Children[0]; c.Type != "main.Session" || !strings.HasPrefix(c.Label, "main.Session at 0x") {
		t.Errorf("a session is typed %q, labelled %q", c.Type, c.Label)
	}
	seen := map[int]bool{}
	for off := 0; off < 300; off += 100 {
		var p childrenDoc
		getJSON(t, "api/children/"+slice+"?limit=100&offset="+strconv.Itoa(off), "ctxleak.web.children/v1", &p)
		for _, c := range p.Children {
			seen[c.ID] = true
		}
		if want := off + 100; (want < 300 && p.Next != want) || (want == 300 && p.Next != 0) {
			t.Errorf("offset %d: next %d", off, p.Next)
		}
	}
	if len(seen) != 300 {
		t.Errorf("%d distinct sessions over the pages, want 300", len(seen))
	}
}

// An object's document says who holds it: the paths from the roots, with
// the holder, and where it was allocated.
func TestAPIObject(t *testing.T) {
	var rep struct {
		Schema string `json:"schema"`
		Groups []struct {
			Object struct{ Addr string } `json:"object"`
			Root   struct {
				Kind     string `json:"kind"`
				Function string `json:"function"`
			} `json:"root"`
		} `json:"groups"`
	}
	getJSON(t, "api/report", "ctxleak.holders/v2", &rep)
	var addr string
	for _, g := range rep.Groups {
		if g.Root.Function == "main.worker" {
			addr = g.Object.Addr
		}
	}
	if addr == "" {
		t.Fatalf("no group held by main.worker: %+v", rep.Groups)
	}
	var obj struct {
		Node struct {
			Type string `json:"type"`
			Size uint64 `json:"size_bytes"`
		} `json:"node"`
		AllocSite *struct{ Function string } `json:"alloc_site"`
		Paths     []struct {
			Root struct {
				Kind      string `json:"kind"`
				Function  string `json:"function"`
				Goroutine uint64 `json:"goroutine_id"`
			} `json:"root"`
			Steps []struct {
				Via  string `json:"via"`
				Type string `json:"type"`
			} `json:"steps"`
		} `json:"paths"`
	}
	getJSON(t, "api/object/"+addr, "ctxleak.web.node/v1", &obj)
	if obj.Node.Type != "[]uint8" || obj.Node.Size != 2<<20 {
		t.Errorf("object %s: type %q size %d, want []uint8 of 2 MiB", addr, obj.Node.Type, obj.Node.Size)
	}
	if obj.AllocSite == nil || obj.AllocSite.Function != "main.newPayload" {
		t.Errorf("alloc site %+v, want main.newPayload", obj.AllocSite)
	}
	if len(obj.Paths) == 0 {
		t.Fatal("no path from a root")
	}
	p := obj.Paths[0]
	var types []string
	for _, s := range p.Steps {
		types = append(types, s.Type)
	}
	if p.Root.Kind != "frame" || p.Root.Function != "main.worker" || p.Root.Goroutine == 0 ||
		strings.Join(types, " ") != "context.valueCtx main.Upload []uint8" {
		t.Errorf("first path: %+v, types %q", p.Root, types)
	}
}

// Bad requests get a status and a JSON error, never a panic; a Host that
// is not loopback is refused; no page or document holds object contents.
func TestAPIRefusals(t *testing.T) {
	for _, tt := range []struct {
		path string
		code int
	}{
		{"api/children/99999999999", 404},
		{"api/children/-1", 404},
		{"api/children/0?limit=-5", 400},
		{"api/children/0?limit=999999", 400},
		{"api/children/0?offset=x", 400},
		{"api/object/0xzz", 400},
		{"api/object/0x10", 404},
		{"node/abc", 404},
		{"object/%1b%5b31m", 400},
		{"nothing-here", 404},
	} {
		code, body := get(t, tt.path)
		if code != tt.code {
			t.Errorf("%s: status %d, want %d: %s", tt.path, code, tt.code, body)
		}
		if strings.ContainsRune(body, 0x1b) {
			t.Errorf("%s: escape character in the answer %q", tt.path, body)
		}
	}
	req, _ := http.NewRequest("GET", server(t)+"api/report", nil)
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host evil.example: status %d, want 421", resp.StatusCode)
	}

	var rep struct {
		Groups []struct {
			Object struct{ Addr string } `json:"object"`
		} `json:"groups"`
	}
	getJSON(t, "api/report", "ctxleak.holders/v2", &rep)
	paths := []string{"", "tree", "roots", "treemap", "api/roots", "api/treemap", "api/report", "api/node/0"}
	for _, g := range rep.Groups {
		paths = append(paths, "object/"+g.Object.Addr, "api/object/"+g.Object.Addr)
	}
	for _, p := range paths {
		code, body := get(t, p)
		if code != 200 {
			t.Errorf("%s: status %d", p, code)
		}
		if strings.Contains(body, "SECRET-PAYLOAD") || strings.Contains(body, "upload.bin") {
			t.Errorf("%s shows object contents", p)
		}
	}
}

// The squarified layout covers its rectangle with one box per value, each
// of an area in proportion.
func TestSquarify(t *testing.T) {
	vals := []float64{60, 25, 10, 3, 1, 1}
	r := rect{0, 0, 300, 200}
	var area float64
	for i, b := range squarify(vals, r) {
		if b.X < -1e-9 || b.Y < -1e-9 || b.X+b.W > 300+1e-6 || b.Y+b.H > 200+1e-6 {
			t.Errorf("box %d %+v out of bounds", i, b)
		}
		if got, want := b.W*b.H, vals[i]/100*300*200; got < want-1e-6 || got > want+1e-6 {
			t.Errorf("box %d: area %v, want %v", i, got, want)
		}
		area += b.W * b.H
	}
	if area < 60000-1e-6 || area > 60000+1e-6 {
		t.Errorf("boxes cover %v, want 60000", area)
	}
	if out := squarify(nil, r); len(out) != 0 {
		t.Errorf("no values: %v", out)
	}
	if out := squarify([]float64{0, 0}, r); len(out) != 2 || out[0].W != 0 {
		t.Errorf("zero values: %v", out)
	}
}

// Every page's template parses with the layout, though the package parses
// them only when a page is first served.
func TestPagesParse(t *testing.T) {
	for _, name := range []string{"groups", "tree", "node", "roots", "treemap"} {
		if p := pages()[name]; p == nil || p.Lookup(name+".html") == nil {
			t.Errorf("page %s: no template %s.html", name, name)
		}
	}
}
