package main

import (
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/internal/textsafe"
	"unicode"
)

// TestErrorsOneLine gives ctxleak inputs whose names carry newlines and
// escape sequences: each error is one line on stderr, with the input's
// control characters written as escapes.
func TestErrorsOneLine(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"holders", dir + "/x\ny"}, `x\ny`},
		{[]string{"holders", dir + "/x", "--binary", dir + "/b\x1b[2Jc"}, `\x1b[2J`},
		{[]string{"analyze", dir + "/p\r\nq"}, `p\r\nq`},
		{[]string{"analyze", "http://a\nb/heap"}, `http://a\nb/heap`},
		{[]string{"holders", dir + "/bidi\u202eevil\xff"}, `bidi\u202eevil\xff`},
	} {
		code, _, stderr := ctxleak(t, tt.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want 2; stderr %q", tt.args, code, stderr)
		}
		line, rest, _ := strings.Cut(stderr, "\n")
		if rest != "" || !strings.HasPrefix(line, "ctxleak: ") {
			t.Errorf("%q: stderr is not one ctxleak line: %q", tt.args, stderr)
		}
		if i := strings.IndexFunc(line, func(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }); i >= 0 {
			t.Errorf("%q: stderr has an unescaped character at %d: %q", tt.args, i, line)
		}
		if !strings.Contains(line, tt.want) {
			t.Errorf("%q: stderr %q does not contain %s", tt.args, line, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain: text, ünïcode": "plain: text, ünïcode",
		"a\nb\tc":              `a\nb\tc`,
		"\x1b[31mred\x7f":      `\x1b[31mred\x7f`,
		"bad \xff\xfe utf-8":   `bad \xff\xfe utf-8`,
		"real \uFFFD stays":    "real \uFFFD stays",
		"\u2028line sep":       `\u2028line sep`,
	} {
		if got := textsafe.Escape(in); got != want {
			t.Errorf("textsafe.Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
