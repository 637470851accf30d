// Package textfit fits text to a terminal's width: it finds the width,
// shortens names from the left (keeping their tail, the part that tells
// them apart) and wraps long lines. Widths count terminal cells; ANSI
// escape codes take none.
package textfit

import (
	"io"
	"os"
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
		cont := indent + 2
		if cont > width/2 {
			indent, cont = 0, 0
		}
		wrapped := strings.Split(ansi.Wrap(body, width-cont, ""), "\n")
		for k := range wrapped {
			pad := cont
			if k == 0 {
				pad = indent
			}
			wrapped[k] = strings.Repeat(" ", pad) + strings.TrimRight(wrapped[k], " ")
		}
		lines[i] = strings.Join(wrapped, "\n")
	}
	return strings.Join(lines, "\n")
}
