package ui

import (
	"bytes"
	"strings"
	"testing"
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
