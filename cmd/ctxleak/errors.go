package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Exit statuses of ctxleak.
const (
	exitClean    = 0 // nothing retained, every expectation met
	exitFindings = 1 // retention found, or an expectation not met
	exitUsage    = 2 // bad flags, arguments or input

	// An interrupted run exits 128 plus the signal number, as a shell
	// reports a process the signal killed: 130 for SIGINT, 143 for SIGTERM.
	exitSignalBase = 128
)

// exitError is an error that chooses the process exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// findingsErrorf reports that the analysis found what it looks for
// (retention, growth past a threshold, a scenario not as expected): exit 1.
// The message is printed as the last line of output.
func findingsErrorf(format string, args ...any) error {
	return &exitError{code: exitFindings, err: fmt.Errorf(format, args...)}
}

// usageErrorf reports a bad flag, argument or input file: exit 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// silentExit ends the process with code without printing anything more;
// the command has already written its report.
func silentExit(code int) error {
	return &exitError{code: code}
}

// interruptError is the cause of a run cut short by a signal.
type interruptError struct{ sig syscall.Signal }

func (e *interruptError) Error() string {
	if e.sig == syscall.SIGTERM {
		return "terminated"
	}
	return "interrupted"
}

// report prints err once, as "ctxleak: ...", and returns the exit status
// for it. Errors that are not exitErrors (cobra's flag and argument errors,
// unreadable files) are usage or input errors: exit 2.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitClean
	}
	code := exitUsage
	var ee *exitError
	var ie *interruptError
	if errors.As(err, &ie) {
		code = exitSignalBase + int(ie.sig)
	} else if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	fmt.Fprintf(stderr, "ctxleak: %s\n", oneLine(err.Error()))
	return code
}

// oneLine escapes what would break a message out of its line or reach the
// terminal as a control sequence: newlines, other control characters,
// invisible format characters and bytes that are not UTF-8, written as Go
// escapes (\n, \x1b, \u202e), so text from an input (a file name, a URL, a
// flag value) never adds a line of its own to stderr.
func oneLine(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r) // 'x' with r escaped
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}
