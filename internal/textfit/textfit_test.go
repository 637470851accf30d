package textfit

import (
	"strings"
	"testing"
)

func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"main.handleUpload (shop/upload.go:69)", 80, "main.handleUpload (shop/upload.go:69)"},
		{"main.handleUpload (shop/upload.go:69)", 20, "...hop/upload.go:69)"},
		{"abcdef", 3, "abc"},
		{"\x1b[1mabcdef\x1b[0m", 5, "...ef"},
		{"\x1b[1mabc\x1b[0m", 5, "\x1b[1mabc\x1b[0m"},
	} {
		if got := Shorten(tt.s, tt.n); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	s := "verdict:   as expected: " + strings.Repeat("the payload stays alive while the goroutine waits ", 4) + "\n" +
		"  " + strings.Repeat("x", 120) + "\nshort"
	got := Wrap(s, 40)
	for _, line := range strings.Split(got, "\n") {
		if Len(line) > 40 {
			t.Errorf("line of %d cells: %q", Len(line), line)
		}
	}
	if !strings.HasSuffix(got, "\nshort") || !strings.HasPrefix(got, "verdict:   as expected: the payload") {
		t.Errorf("Wrap changed what fits:\n%s", got)
	}
	if strings.ReplaceAll(strings.Join(strings.Fields(got), ""), " ", "") != strings.Join(strings.Fields(s), "") {
		t.Errorf("Wrap lost or added text:\n%s", got)
	}
	if Wrap(s, 0) != s {
		t.Error("Wrap(s, 0) changed s")
	}
}

func TestHang(t *testing.T) {
	s := "  request-running   goroutine 1 frame scenarios.tasksScenario.func1 (scenarios/catalogue.go:428) + 2 x goroutine frame scenarios.task"
	got := Hang(s, 60, 20)
	lines := strings.Split(got, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "  request-running   goroutine 1") {
		t.Fatalf("Hang:\n%s", got)
	}
	for _, l := range lines {
		if Len(l) > 60 {
			t.Errorf("line of %d cells: %q", Len(l), l)
		}
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, strings.Repeat(" ", 20)) || l[20] == ' ' {
			t.Errorf("continuation not under column 20: %q", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(s), " ") {
		t.Errorf("Hang lost or added text:\n%s", got)
	}
}

// A size's number and unit stay on one line.
func TestWrapKeepsSizes(t *testing.T) {
	got := Wrap("#2 2 objects held the same way (the first a runtime.p of 16.0 KiB) retain 32.2 KiB", 78)
	if !strings.Contains(got, "32.2 KiB") || strings.Contains(got, "\u00a0") {
		t.Errorf("Wrap split a size or left a no-break space:\n%q", got)
	}
}
