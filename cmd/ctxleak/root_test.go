package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ctxleak runs the command line in-process and returns its exit status,
// stdout and stderr.
func ctxleak(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return ctxleakStdin(t, strings.NewReader(""), args...)
}

// ctxleakStdin is ctxleak with stdin as standard input.
func ctxleakStdin(t *testing.T, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = execute(stdin, &out, &errb, args)
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
	bi, _ := debug.ReadBuildInfo()
	if want := "ctxleak (devel)\n\tgo\t" + bi.GoVersion + "\n"; !strings.HasPrefix(stdout, want) {
		t.Errorf("--version printed %q, want it to start with %q", stdout, want)
	}
}

// --version prints the module version and the VCS revision, time and state
// from the build info, as "go version -m" does.
func TestVersionText(t *testing.T) {
	bi, err := debug.ParseBuildInfo(`path	github.com/ctxleak/ctxleak/cmd/ctxleak
mod	github.com/ctxleak/ctxleak	v0.4.0	h1:abc=
build	-buildmode=exe
build	GOOS=linux
build	vcs=git
build	vcs.revision=d2e1c4f0123456789abcdef0123456789abcdef0
build	vcs.time=2026-12-01T11:00:00Z
build	vcs.modified=false
`)
	if err != nil {
		t.Fatal(err)
	}
	bi.GoVersion = "go1.25.9" // from the binary's header, not the text
	want := `v0.4.0
	go	go1.25.9
	path	github.com/ctxleak/ctxleak/cmd/ctxleak
	mod	github.com/ctxleak/ctxleak	v0.4.0	h1:abc=
	build	vcs=git
	build	vcs.revision=d2e1c4f0123456789abcdef0123456789abcdef0
	build	vcs.time=2026-12-01T11:00:00Z
	build	vcs.modified=false`
	if got := versionText(bi, true); got != want {
		t.Errorf("versionText:\n%s\nwant:\n%s", got, want)
	}
}

// SIGINT and SIGTERM exit 130 and 143, as a shell reports a process killed
// by them (2 is for usage errors), after removing the spooled standard
// input. The signal is sent once the spool file exists, so ctxleak is
// surely reading its input, blocked on a pipe that stays open.
func TestInterruptExitStatus(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
		msg  string
	}{
		{syscall.SIGINT, 130, "ctxleak: interrupted\n"},
		{syscall.SIGTERM, 143, "ctxleak: terminated\n"},
	} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command("ctxleak", "holders", "-") // the test binary, on PATH (TestMain)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := in.Write([]byte("go1.7 heap dump\n")); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(time.Minute)
			for wait := time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
				if names, _ := filepath.Glob(filepath.Join(tmp, "ctxleak-stdin-*")); len(names) > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(wait)
			}
			if names, _ := filepath.Glob(filepath.Join(tmp, "ctxleak-stdin-*")); len(names) == 0 {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("no spool file in TMPDIR; stderr %q", stderr.String())
			}
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit %d (%v), want %d", code, err, tt.code)
			}
			if stderr.String() != tt.msg {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.msg)
			}
			if names, _ := filepath.Glob(filepath.Join(tmp, "*")); len(names) > 0 {
				t.Errorf("left behind: %q", names)
			}
		})
	}
}
