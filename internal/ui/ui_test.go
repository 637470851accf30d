package ui

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
)

func TestPlainHasNoEscapes(t *testing.T) {
	var buf bytes.Buffer
	p := NewPrinter(&buf, Auto) // a buffer is not a terminal
	if p.Styled() {
		t.Fatal("printer to a buffer is styled")
	}
	p.Print(p.Heading("title") + " " + p.Good("ok") + " " + p.Bad("bad"))
	p.Print(p.Table(Table{Headers: []string{"phase", "alive"}, Rows: [][]string{{"tasks-running", "yes"}}, Right: []int{1}}))
	out := buf.String()
	if strings.Contains(out, "\x1b[") {
		t.Errorf("plain output has escape codes: %q", out)
	}
	for _, r := range out {
		if r > 127 {
			t.Fatalf("plain output has non-ASCII %q:\n%s", r, out)
		}
	}
	if !strings.Contains(out, "| tasks-running |") {
		t.Errorf("table not rendered with ASCII borders:\n%s", out)
	}
}

func TestStyledUsesColourAndBoxDrawing(t *testing.T) {
	var buf bytes.Buffer
	p := NewPrinter(&buf, Styled)
	p.Print(p.Good("ok"))
	p.Print(p.Table(Table{Headers: []string{"a"}, Rows: [][]string{{"b"}}}))
	out := buf.String()
	if !strings.Contains(out, "\x1b[") || !strings.Contains(out, "╭") {
		t.Errorf("styled output lacks colour or rounded borders: %q", out)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"auto": Auto, "never": Plain, "always": Styled} {
		if got, ok := ParseMode(in); !ok || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", in, got, ok)
		}
	}
	if _, ok := ParseMode("sometimes"); ok {
		t.Error("ParseMode(sometimes) ok")
	}
}

// At COLUMNS=80 a wide table shortens its widest column from the left,
// keeping the tail, and long text wraps: no line is wider than 80 cells,
// styled or plain.
func TestFitsWidth(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	long := "github.com/ctxleak/ctxleak/scenarios.(*catalogue).someVeryLongFunctionName (ctxleak/scenarios/catalogue.go:427)"
	for _, mode := range []Mode{Plain, Styled} {
		var buf bytes.Buffer
		p := NewPrinter(&buf, mode)
		if p.Width() != 80 {
			t.Fatalf("width %d, want 80 from COLUMNS", p.Width())
		}
		p.Print(p.Table(Table{
			Headers: []string{"site", "in use", "growth"},
			Rows:    [][]string{{long, "2.5 MiB", p.Warn("+2.5 MiB (new)")}, {"main.f (a.go:1)", "1 B", "0 B"}},
			Right:   []int{1, 2},
		}))
		p.Print(p.Faint("mechanism: " + strings.Repeat("the context holds the payload until the goroutine returns; ", 3)))
		out := buf.String()
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if w := lipgloss.Width(line); w > 80 {
				t.Errorf("mode %d: line of %d cells: %q", mode, w, line)
			}
		}
		if !strings.Contains(out, "...") || !strings.Contains(out, "scenarios/catalogue.go:427)") {
			t.Errorf("mode %d: the long site is not shortened to its tail:\n%s", mode, out)
		}
		if !strings.Contains(out, "main.f (a.go:1)") {
			t.Errorf("mode %d: a short site is shortened:\n%s", mode, out)
		}
	}
}

// A table with short headers uses them only when it is too wide.
func TestTableShortHeaders(t *testing.T) {
	tb := Table{
		Headers: []string{"phase", "heap vs base", "GC to free"},
		Short:   []string{"phase", "heap", "GCs"},
		Rows:    [][]string{{"request-returned", "+1.0 MiB", "1"}},
	}
	for _, tt := range []struct {
		columns string
		want    string
	}{{"", "| phase            | heap vs base | GC to free |"}, {"40", "| phase            | heap     | GCs |"}} {
		t.Setenv("COLUMNS", tt.columns)
		p := NewPrinter(&bytes.Buffer{}, Plain)
		if out := p.Table(tb); !strings.Contains(out, tt.want) {
			t.Errorf("COLUMNS=%q: want %q in\n%s", tt.columns, tt.want, out)
		}
	}
}

func TestWidth(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	if got := Width(&bytes.Buffer{}); got != 80 {
		t.Errorf("Width with COLUMNS=80 = %d", got)
	}
	t.Setenv("COLUMNS", "")
	if got := Width(&bytes.Buffer{}); got != 0 {
		t.Errorf("Width of a buffer = %d, want 0 (no limit)", got)
	}
}
