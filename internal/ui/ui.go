// Package ui renders ctxleak's terminal output: headings, verdicts and
// tables, styled with lipgloss on a terminal and plain (no escape codes,
// ASCII borders) when the output is piped, redirected or NO_COLOR is set.
package ui

import (
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/term"
	"github.com/ctxleak/ctxleak/internal/textfit"
	"github.com/mattn/go-isatty"
	"github.com/muesli/termenv"
)

// Mode chooses between styled and plain output.
type Mode int

const (
	// Auto styles output only when it goes to a terminal and NO_COLOR is unset.
	Auto Mode = iota
	// Plain never emits escape codes and draws tables with ASCII borders.
	Plain
	// Styled always emits colours and draws tables with rounded borders.
	Styled
)

// ParseMode reads the value of a --color flag: "auto", "never" or "always".
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "auto", "":
		return Auto, true
	case "never", "plain":
		return Plain, true
	case "always", "styled":
		return Styled, true
	}
	return Auto, false
}

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

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Printer writes styled or plain text to one writer, fitted to its width.
type Printer struct {
	w      io.Writer
	r      *lipgloss.Renderer
	styled bool
	width  int
}

// NewPrinter returns a Printer for w. In Auto mode it styles output only if
// w is a terminal and the NO_COLOR environment variable is empty. It fits
// output to the width Width finds for w: COLUMNS, else the
// terminal's width, else no limit.
func NewPrinter(w io.Writer, mode Mode) *Printer {
	styled := mode == Styled
	if mode == Auto {
		styled = IsTerminal(w) && os.Getenv("NO_COLOR") == ""
	}
	r := lipgloss.NewRenderer(w)
	// Never let lipgloss query the terminal for its background colour: it
	// can stall on terminals that do not answer.
	r.SetHasDarkBackground(true)
	if styled {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return &Printer{w: w, r: r, styled: styled, width: Width(w)}
}

// Width returns the width in cells the printer fits its output to, 0 for
// no limit.
func (p *Printer) Width() int { return p.width }

// SetWidth sets the width in cells to fit output to, 0 for no limit: the
// width of the final destination when the printer writes to a buffer.
func (p *Printer) SetWidth(n int) { p.width = max(n, 0) }

// Styled reports whether the printer emits colours and box-drawing borders.
func (p *Printer) Styled() bool { return p.styled }

// Writer returns the underlying writer.
func (p *Printer) Writer() io.Writer { return p.w }

// Print writes s followed by a newline, its lines wrapped to the
// printer's width (see textfit.Wrap), ignoring write errors as fmt.Println
// does.
func (p *Printer) Print(s string) {
	_, _ = io.WriteString(p.w, textfit.Wrap(s, p.width)+"\n")
}

func (p *Printer) paint(color string, bold bool, s string) string {
	if !p.styled {
		return s
	}
	st := p.r.NewStyle().Foreground(lipgloss.Color(color))
	if bold {
		st = st.Bold(true)
	}
	return st.Render(s)
}

// Heading styles a section title.
func (p *Printer) Heading(s string) string { return p.paint("12", true, s) }

// Good styles a passing verdict.
func (p *Printer) Good(s string) string { return p.paint("10", true, s) }

// Bad styles a failing verdict or an error.
func (p *Printer) Bad(s string) string { return p.paint("9", true, s) }

// Warn styles something that needs attention but is not a failure.
func (p *Printer) Warn(s string) string { return p.paint("11", false, s) }

// Faint styles secondary text such as explanations and hints.
func (p *Printer) Faint(s string) string { return p.paint("8", false, s) }

// Bold styles emphasised text.
func (p *Printer) Bold(s string) string {
	if !p.styled {
		return s
	}
	return p.r.NewStyle().Bold(true).Render(s)
}

// Table describes a table to render. Cells may already be styled.
type Table struct {
	Headers []string
	Rows    [][]string
	// Right lists the columns (by index) to align right, such as numbers.
	Right []int
	// Short, if set, are shorter headers, one per column, for a table too
	// wide for the terminal with Headers.
	Short []string
}

// minColumn is the narrowest a table's column is shortened to.
const minColumn = 8

// fit makes t at most width cells wide: it shortens the cells of the
// widest columns from the left, keeping their tails.
func (t Table) fit(width int) Table {
	if width <= 0 || len(t.Headers) == 0 {
		return t
	}
	cells := make([]int, len(t.Headers)) // the widest cell of each column
	for _, row := range t.Rows {
		for c, cell := range row {
			if c < len(cells) {
				cells[c] = max(cells[c], textfit.Len(cell))
			}
		}
	}
	cols := make([]int, len(t.Headers))
	for c, h := range t.Headers {
		cols[c] = max(cells[c], textfit.Len(h))
	}
	total := func() int {
		n := len(cols) + 1 // the borders
		for _, w := range cols {
			n += w + 2 // a cell and its padding
		}
		return n
	}
	if total() <= width {
		return t
	}
	out := Table{Right: t.Right, Headers: slices.Clone(t.Headers), Rows: make([][]string, len(t.Rows))}
	if len(t.Short) == len(t.Headers) {
		copy(out.Headers, t.Short)
		for c, h := range out.Headers {
			cols[c] = max(cells[c], textfit.Len(h))
		}
	}
	for total() > width {
		widest := 0
		for c, w := range cols {
			if w > cols[widest] {
				widest = c
			}
		}
		if cols[widest] <= minColumn {
			break
		}
		cols[widest] = max(minColumn, cols[widest]-(total()-width))
	}
	for c, h := range out.Headers {
		out.Headers[c] = textfit.Shorten(h, cols[c])
	}
	for r, row := range t.Rows {
		out.Rows[r] = make([]string, len(row))
		for c, cell := range row {
			if c < len(cols) {
				cell = textfit.Shorten(cell, cols[c])
			}
			out.Rows[r][c] = cell
		}
	}
	return out
}

// Table renders t: rounded borders when styled, ASCII borders when plain.
// A table wider than the printer's width has its widest columns
// shortened from the left ("...pkg/file.go:12").
func (p *Printer) Table(t Table) string {
	t = t.fit(p.width)
	right := make(map[int]bool, len(t.Right))
	for _, c := range t.Right {
		right[c] = true
	}
	border := lipgloss.ASCIIBorder()
	borderStyle := p.r.NewStyle()
	if p.styled {
		border = lipgloss.RoundedBorder()
		borderStyle = borderStyle.Foreground(lipgloss.Color("8"))
	}
	tb := table.New().
		Border(border).
		BorderStyle(borderStyle).
		Headers(t.Headers...).
		Rows(t.Rows...).
		StyleFunc(func(row, col int) lipgloss.Style {
			st := p.r.NewStyle().Padding(0, 1)
			if right[col] {
				st = st.Align(lipgloss.Right)
			}
			if row == table.HeaderRow && p.styled {
				st = st.Bold(true)
			}
			return st
		})
	return strings.TrimRight(tb.Render(), "\n")
}
