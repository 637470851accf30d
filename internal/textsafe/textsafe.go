// Package textsafe makes text read from inputs (function, file and type
// names, label keys and values) safe to print on a terminal, in a CI log
// and in GitHub workflow commands: control characters, invalid UTF-8 and
// the Unicode characters that reorder or hide text are written as Go
// escapes, so an input cannot move the cursor, recolour the terminal or
// start a line of its own.
package textsafe

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s unchanged when every character of it is safe to print,
// and otherwise s with each unsafe character written as a Go escape
// (\n, \x1b, \u202e, ...) and each byte of invalid UTF-8 as \xNN. A
// backslash is left alone, so escaping is not reversible; it is meant for
// display, never for parsing. Escape is idempotent.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case unsafeRune(r):
			// QuoteRune writes '\x1b', '\n' or '\u202e': keep the inside.
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// IsSafe reports whether Escape(s) == s.
func IsSafe(s string) bool { return firstUnsafe(s) < 0 }

func firstUnsafe(s string) int {
	// Printable ASCII is safe: most names are all of it, and checking a
	// byte is far cheaper than decoding and classifying a rune.
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return -1
	}
	// s[i] starts a rune: every byte before it was one of its own.
	if j := firstUnsafeRune(s[i:]); j >= 0 {
		return i + j
	}
	return -1
}

// firstUnsafeRune is firstUnsafe, rune by rune.
func firstUnsafeRune(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return i
			}
		}
		if unsafeRune(r) {
			return i
		}
	}
	return -1
}

// unsafeRune reports whether r must not reach a terminal as it is: C0 and
// C1 control characters and DEL (escape sequences, carriage returns, new
// lines, tabs), the bidirectional formatting characters ("Trojan Source")
// and the line and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == '\u2028', r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return true
	}
	return unicode.Is(unicode.Cc, r)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// GitHubData escapes s for the message of a GitHub Actions workflow
// command (after the last "::"): '%', '\r' and '\n' are written as %25,
// %0D and %0A, as the runner expects, then the other unsafe characters as
// Escape writes them.
func GitHubData(s string) string {
	return Escape(githubData.Replace(s))
}

// GitHubProperty escapes s for a property value of a GitHub Actions
// workflow command (file=, title=): as GitHubData, and ':' and ',' as
// %3A and %2C.
func GitHubProperty(s string) string {
	return Escape(githubProperty.Replace(s))
}

var (
	githubData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	githubProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// GitHubVerbatim returns text to print in a GitHub Actions log so that
// none of its lines runs as a workflow command. The runner reads a line as
// a command when it starts with "::" after leading spaces; when a line of
// text does, text is wrapped in "::stop-commands::TOKEN" and "::TOKEN::",
// which turn command processing off and on again, with a TOKEN made from
// text's SHA-256, which the text cannot contain. Other text is returned as
// it is. text must end with a newline.
func GitHubVerbatim(text string) string {
	forged := false
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
			forged = true
			break
		}
	}
	if !forged {
		return text
	}
	sum := sha256.Sum256([]byte(text))
	token := "ctxleak-" + hex.EncodeToString(sum[:12])
	return "::stop-commands::" + token + "\n" + text + "::" + token + "::\n"
}
