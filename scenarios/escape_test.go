package scenarios

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/heapdump"
)

// TestDetailEscapesNames: names from a dump and its binary with control
// characters are escaped in a phase's holder, its path and its text.
func TestDetailEscapesNames(t *testing.T) {
	evil := "main.x\x1b[2J\r\n::error::forged"
	g := &heap.Group{
		Root: heap.Holder{Kind: heapdump.RootFrame, Goroutine: 7, Function: evil,
			Location:  &binsym.Position{Function: evil, File: "/src/a\x1b.go", Line: 3},
			CreatedBy: &binsym.Position{Function: evil}},
		OtherRoots: []heap.Holder{{Kind: heapdump.RootGlobal, Global: evil}},
		Shared:     true,
		Path:       []heap.Step{{Via: evil, Type: evil, Size: 64}},
	}
	d := detail(g)
	d.Holder = d.text()
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{d.Holder, d.PathText(), string(out)} {
		if strings.ContainsAny(s, "\x1b\r\n") || strings.Contains(s, `\u001b`) {
			t.Errorf("a control character is left:\n%q", s)
		}
	}
	if !strings.Contains(d.Holder, `main.x\x1b[2J\r\n::error::forged`) {
		t.Errorf("holder %q does not show the escaped name", d.Holder)
	}
}
