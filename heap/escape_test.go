package heap

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
)

// TestRenderersEscapeNames: names from a dump and its binary with control
// characters reach neither the text, the short names nor the JSON of a
// group as they are, and Escaped escapes every name a caller could print.
func TestRenderersEscapeNames(t *testing.T) {
	evil := "main.x\x1b[2J\r\n::error::forged"
	pos := func() *binsym.Position { return &binsym.Position{Function: evil, File: "/src/a\x1b.go", Line: 3} }
	g := &Group{
		Root: Holder{Kind: heapdump.RootFrame, Goroutine: 7, Status: evil, Function: evil, Callee: evil,
			Location: pos(), CreatedBy: pos(), Creator: pos(), Detail: evil},
		OtherRoots: []Holder{{Kind: heapdump.RootGlobal, Global: evil}},
		Shared:     true,
		Path:       []Step{{Via: evil, Type: evil, Size: 64}},
		Inside:     []Step{{Via: evil, Type: evil, Size: 8}},
		MadeOf:     []Part{{Type: evil, Count: 1, Bytes: 8, AllocSite: pos()}},
		Object:     Object{Type: evil, Size: 64, AllocSite: pos(), AllocStack: []binsym.Position{*pos()}},
		Count:      1,
	}
	out, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	e := g.Escaped()
	fields, err := json.Marshal(e.Root)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"text": g.Text("#1", PlainStyle{}), "short": g.Short(), "holder short": g.OtherRoots[0].Short(),
		"json": string(out), "escaped fields": string(fields) + e.Path[0].Via + e.Object.Type + e.MadeOf[0].Type + e.Inside[0].Type} {
		if strings.ContainsAny(s, "\x1b\r") || strings.Contains(s, `\u001b`) {
			t.Errorf("%s: a control character is left:\n%q", name, s)
		}
		for line := range strings.Lines(s) {
			if strings.HasPrefix(strings.TrimSpace(line), "::") {
				t.Errorf("%s: a line starts with input text: %q", name, line)
			}
		}
	}
	if !strings.Contains(g.Short(), `main.x\x1b[2J\r\n::error::forged`) {
		t.Errorf("short %q does not show the escaped name", g.Short())
	}
	if g.Root.Function != evil || g.Object.AllocStack[0].Function != evil {
		t.Error("Escaped changed the group it copies")
	}
	if !reflect.DeepEqual(e.Escaped(), e) {
		t.Error("Escaped is not idempotent")
	}
}
