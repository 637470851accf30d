package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"main.(*server).handle", "main.(*server).handle"},
		{"net/http.HandlerFunc.ServeHTTP", "net/http.HandlerFunc.ServeHTTP"},
		{"héllo, 世界", "héllo, 世界"},
		{"a\nb", `a\nb`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"x\r::error::forged", `x\r::error::forged`},
		{"tab\there", `tab\there`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085", `c1\u0085`},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`},
		{"ls\u2028", `ls\u2028`},
		{"", ""},
	} {
		got := Escape(tc.in)
		if got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := Escape(got); again != got {
			t.Errorf("Escape not idempotent on %q: %q", got, again)
		}
		if IsSafe(tc.in) != (tc.in == tc.want) {
			t.Errorf("IsSafe(%q) = %v", tc.in, IsSafe(tc.in))
		}
	}
}

// TestEscapeAllBytes checks every byte and every rune of the first planes:
// the result never holds a control character and is valid UTF-8.
func TestEscapeAllBytes(t *testing.T) {
	for c := 0; c < 256; c++ {
		checkClean(t, Escape("a"+string([]byte{byte(c)})+"b"))
	}
	for r := rune(0); r < 0x3000; r++ {
		checkClean(t, Escape(string(r)))
	}
}

func checkClean(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%q is not valid UTF-8", s)
	}
	for _, r := range s {
		if unsafeRune(r) {
			t.Fatalf("%q still holds %U", s, r)
		}
	}
}

func TestGitHub(t *testing.T) {
	in := "100% main.go:1,\r\n::error::forged\x1b"
	data := GitHubData(in)
	if strings.ContainsAny(data, "\r\n\x1b") || strings.Contains(data, "100% ") {
		t.Errorf("GitHubData(%q) = %q", in, data)
	}
	if want := `100%25 main.go:1,%0D%0A::error::forged\x1b`; data != want {
		t.Errorf("GitHubData = %q, want %q", data, want)
	}
	prop := GitHubProperty(in)
	if strings.ContainsAny(prop, ":,\r\n") {
		t.Errorf("GitHubProperty(%q) = %q", in, prop)
	}
}

func TestGitHubVerbatim(t *testing.T) {
	plain := "heap in use 10 MiB\n  main.f  10 MiB\n"
	if got := GitHubVerbatim(plain); got != plain {
		t.Errorf("GitHubVerbatim changed plain text: %q", got)
	}
	forged := "sites:\n  ::error::forged\n\t::warning::x\n"
	got := GitHubVerbatim(forged)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	first, last := lines[0], lines[len(lines)-1]
	token, ok := strings.CutPrefix(first, "::stop-commands::")
	if !ok || len(token) < 16 || last != "::"+token+"::" || strings.Join(lines[1:len(lines)-1], "\n")+"\n" != forged {
		t.Errorf("GitHubVerbatim(%q) = %q", forged, got)
	}
	if strings.Contains(forged, token) {
		t.Errorf("the token %q is in the text", token)
	}
	if again := GitHubVerbatim(forged); again != got {
		t.Errorf("not deterministic: %q, %q", got, again)
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("a\x1b[2Jb\n\xff")
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		checkClean(t, e)
		if Escape(e) != e {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, e, Escape(e))
		}
		if IsSafe(s) && e != s {
			t.Fatalf("safe %q changed to %q", s, e)
		}
	})
}
