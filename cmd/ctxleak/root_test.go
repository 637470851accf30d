package main

import (
	"bytes"
	"strings"
	"testing"
)

// ctxleak runs the command line in-process and returns its exit status,
// stdout and stderr.
func ctxleak(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = execute(strings.NewReader(""), &out, &errb, args)
	return code, out.String(), errb.String()
}

func TestRootExitCodes(t *testing.T) {
	for _, tt := range []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"version", []string{"--version"}, 0, ""},
		{"help", []string{"--help"}, 0, ""},
		{"unknown flag", []string{"--bogus"}, 2, "ctxleak: unknown flag: --bogus"},
		{"unknown command", []string{"frobnicate"}, 2, `ctxleak: unknown command "frobnicate"`},
		{"bad color", []string{"--color", "purple", "completion", "bash"}, 2, `invalid --color "purple"`},
		{"completion", []string{"completion", "bash"}, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := ctxleak(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.inStderr)
			}
			if n := strings.Count(stderr, "ctxleak: "); n > 1 {
				t.Errorf("error printed %d times:\n%s", n, stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	_, stdout, _ := ctxleak(t, "--version")
	if !strings.HasPrefix(stdout, "ctxleak ") {
		t.Errorf("--version printed %q", stdout)
	}
}
