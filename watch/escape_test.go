package watch_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/watch"
)

// TestReportEscapesNames: names from the dump and the binary (a global, a
// type, a function) with control characters reach neither the summary
// nor the text report as they are.
func TestReportEscapesNames(t *testing.T) {
	evil := "main.x\x1b[2J\r\n::error::forged"
	g := &heap.Group{
		Root: heap.Holder{Kind: heapdump.RootGlobal, Global: evil,
			CreatedBy: &binsym.Position{Function: evil, File: "/src/a\nb.go", Line: 3}},
		Path:   []heap.Step{{Via: evil, Type: evil, Size: 64}},
		Object: heap.Object{Type: evil, Size: 64},
		Count:  1,
	}
	r := watch.Report{Time: time.Unix(0, 0).UTC(), OutlivedCount: 1,
		Values:  []watch.Value{{Label: "req\n1", Type: evil, Addr: "0x1", Holder: g}},
		Unknown: nil}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{r.Summary(), b.String()} {
		if strings.ContainsAny(s, "\x1b\r") {
			t.Errorf("control characters reached the report:\n%q", s)
		}
		for line := range strings.Lines(s) {
			if strings.HasPrefix(strings.TrimSpace(line), "::") {
				t.Errorf("a line starts with input text: %q", line)
			}
		}
	}
	if !strings.Contains(r.Summary(), `main.x\x1b[2J\r\n::error::forged`) {
		t.Errorf("summary %q does not show the escaped name", r.Summary())
	}
}
