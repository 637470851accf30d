// Package textfit fits text to a width (ui.Width finds the terminal's):
// it shortens names from the left (keeping their tail, the part that tells
// them apart) and wraps long lines. Widths count runes; ANSI escape
// sequences (colours) take none. It has no dependencies, so that the
// library packages that use it stay light.
package textfit

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// escape matches an ANSI CSI escape sequence, such as a colour.
var escape = regexp.MustCompile("\x1b\\[[0-9;?]*[@-~]")

// Len returns the width of s, escape sequences left out.
func Len(s string) int {
	if strings.IndexByte(s, 0x1b) < 0 {
		return utf8.RuneCountInString(s)
	}
	return utf8.RuneCountInString(escape.ReplaceAllString(s, ""))
}

// Ellipsis starts a shortened text.
const Ellipsis = "..."

// Shorten returns s in at most n cells: s itself when it fits, else its
// tail after Ellipsis, "...ctxleak/scenarios/catalogue.go:427". When n
// leaves no room for the tail, s is cut to n cells. A shortened text loses
// its escape sequences.
func Shorten(s string, n int) string {
	if Len(s) <= n {
		return s
	}
	r := []rune(escape.ReplaceAllString(s, ""))
	if n <= len(Ellipsis) {
		return string(r[:max(n, 0)])
	}
	return Ellipsis + string(r[len(r)-(n-len(Ellipsis)):])
}

// Wrap breaks the lines of s longer than width cells at spaces (or, for
// a word longer than a line, anywhere), indenting each continuation two
// cells more than the line it continues. A size's number and unit ("32.2
// KiB") stay together. A width of 0 or less leaves s as it is.
func Wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if Len(line) <= width {
			continue
		}
		body := strings.TrimLeft(line, " ")
		indent := len(line) - len(body)
		lines[i] = hang(body, width, indent, indent+2)
	}
	return strings.Join(lines, "\n")
}

// Hang wraps s, one line, to width cells as Wrap does, but indents the
// continuation lines by indent cells: under a column that the first line
// starts further left. A width of 0 or less leaves s as it is.
func Hang(s string, width, indent int) string {
	if width <= 0 || Len(s) <= width {
		return s
	}
	body := strings.TrimLeft(s, " ")
	return hang(body, width, len(s)-len(body), indent)
}

// hang wraps body to width cells, the first line indented by first cells
// and the others by cont, or by none when that leaves less than half the
// width.
func hang(body string, width, first, cont int) string {
	if cont > width/2 {
		first, cont = min(first, width/2), 0
	}
	body = sizeSpace.ReplaceAllString(body, "$1"+nbsp+"$2")
	var out strings.Builder
	line, lineLen := "", 0
	pad, limit := first, width-first
	flush := func() {
		out.WriteString(strings.Repeat(" ", pad) + strings.TrimRight(line, " ") + "\n")
		line, lineLen = "", 0
		pad, limit = cont, width-cont
	}
	for _, word := range strings.Split(body, " ") {
		n := Len(word)
		if lineLen > 0 && lineLen+1+n > limit {
			flush()
		}
		// A word longer than a line is cut, unless it is styled.
		for n > limit && lineLen == 0 && !strings.Contains(word, "\x1b") {
			r, cut := []rune(word), limit
			line, lineLen = string(r[:cut]), cut
			flush()
			word, n = string(r[cut:]), n-cut
		}
		if lineLen > 0 {
			line += " "
			lineLen++
		}
		line += word
		lineLen += n
	}
	out.WriteString(strings.Repeat(" ", pad) + strings.TrimRight(line, " "))
	return strings.ReplaceAll(out.String(), nbsp, " ")
}

// nbsp joins a size's number and unit while a line is wrapped.
const nbsp = "\u00a0"

// sizeSpace matches the space between a size's number and its unit:
// "32.2 KiB", "+512 B".
var sizeSpace = regexp.MustCompile(`(\d) ([KMGTP]?i?B\b)`)
