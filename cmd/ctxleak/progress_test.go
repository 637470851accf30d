package main

import (
	"strings"
	"testing"
)

// "ctxleak holders" shows its progress on a terminal's stderr: nothing
// when stderr is piped, and with NO_COLOR or --color never no escape code
// at all, only carriage returns.
func testHoldersProgress(t *testing.T, dump, exe string) {
	args := []string{"holders", dump, "--binary", exe}

	t.Setenv("NO_COLOR", "")
	_, _, piped := ctxleak(t, args...)
	if strings.ContainsAny(piped, "\r\x1b") || strings.Count(piped, "\n") != 1 || !strings.HasPrefix(piped, "ctxleak: retention found") {
		t.Errorf("piped stderr %q: want the summary line only", piped)
	}

	progressAlways = true
	t.Cleanup(func() { progressAlways = false })
	for _, tt := range []struct {
		name    string
		noColor string
		args    []string
		escapes bool
	}{
		{"NO_COLOR", "1", nil, false},
		{"--color never", "", []string{"--color", "never"}, false},
		{"--color always", "", []string{"--color", "always"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tt.noColor)
			_, _, stderr := ctxleak(t, append(tt.args, args...)...)
			for _, want := range []string{"ctxleak: reading " + dump, "ctxleak: computing what each object retains", "ctxleak: finding the holders"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("no %q in stderr %q", want, stderr)
				}
			}
			if got := strings.Contains(stderr, "\x1b"); got != tt.escapes {
				t.Errorf("escape codes %v, want %v: %q", got, tt.escapes, stderr)
			}
			// The status line is erased before the summary line.
			if i := strings.LastIndex(stderr, "\r"); i < 0 || !strings.HasPrefix(strings.TrimLeft(stderr[i+1:], "\x1b[2K"), "ctxleak: retention found") {
				t.Errorf("stderr does not end with the summary line after the status line: %q", stderr)
			}
		})
	}
}
