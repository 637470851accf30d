// Package textfit fits text to a terminal's width: it finds the width,
// shortens names from the left (keeping their tail, the part that tells
// them apart) and wraps long lines. Widths count terminal cells; ANSI
// escape codes take none.
package textfit

import (
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
)

// Width returns the width to fit output to w in: the COLUMNS environment
// variable when it holds a positive number, else the width of the
// terminal w is, else 0, meaning no limit (a pipe or a file).
func Width(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	f, ok := w.(interface{ Fd() uintptr })
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0
	}
	n, _, err := term.GetSize(f.Fd())
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// Len returns the width of s in cells, escape codes left out.
func Len(s string) int { return ansi.StringWidth(s) }

// Ellipsis starts a shortened text.
const Ellipsis = "..."

// Shorten returns s in at most n cells: s itself when it fits, else its
// tail after Ellipsis, "...ctxleak/scenarios/catalogue.go:427". When n
// leaves no room for the tail, s is cut to n cells.
func Shorten(s string, n int) string {
	w := Len(s)
	if w <= n {
		return s
	}
	if n <= len(Ellipsis) {
		return ansi.Truncate(s, max(n, 0), "")
	}
	return ansi.TruncateLeft(s, w-n+len(Ellipsis), Ellipsis)
}

// Wrap breaks the lines of s longer than width cells at spaces (or, for
// a word longer than a line, anywhere), indenting each continuation two
// cells more than the line it continues. A width of 0 or less leaves s as
// it is.
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
	head, rest, _ := strings.Cut(ansi.Wrap(body, width-first, ""), "\n")
	out := strings.Repeat(" ", first) + strings.TrimRight(head, " ")
	if rest != "" {
		// The rest, wrapped again to the width its lines have.
		rest = strings.ReplaceAll(strings.TrimLeft(rest, " "), "\n", " ")
		for _, line := range strings.Split(ansi.Wrap(rest, width-cont, ""), "\n") {
			out += "\n" + strings.Repeat(" ", cont) + strings.TrimRight(line, " ")
		}
	}
	return strings.ReplaceAll(out, nbsp, " ")
}

// nbsp joins a size's number and unit while a line is wrapped.
const nbsp = "\u00a0"

// sizeSpace matches the space between a size's number and its unit:
// "32.2 KiB", "+512 B".
var sizeSpace = regexp.MustCompile(`(\d) ([KMGTP]?i?B\b)`)
