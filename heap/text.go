package heap

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/textfit"
)

// Style decorates the text report. PlainStyle leaves text as it is and
// draws paths with ASCII; a terminal style can add colour.
type Style interface {
	Heading(string) string
	Bold(string) string
	Faint(string) string
	Warn(string) string
	// Unicode reports whether box-drawing characters may be used.
	Unicode() bool
	// Input names, in the caller's terms, the input that would supply
	// what r says is missing (a command-line flag, say), or returns ""
	// to leave it unnamed. The report shows it in parentheses: "no
	// executable given (--binary): ...".
	Input(r Reason) string
}

// Widther is a Style that fits the report to a width: paths shorten long
// type names from the left, other lines wrap. Width returns the width in
// cells, 0 for no limit.
type Widther interface {
	Width() int
}

// styleWidth returns the width st fits the report to, 0 for no limit.
func styleWidth(st Style) int {
	if w, ok := st.(Widther); ok {
		return w.Width()
	}
	return 0
}

// PlainStyle is the Style for logs and pipes: no escapes, ASCII only.
type PlainStyle struct{}

// Heading returns s as it is.
func (PlainStyle) Heading(s string) string { return s }

// Bold returns s as it is.
func (PlainStyle) Bold(s string) string { return s }

// Faint returns s as it is.
func (PlainStyle) Faint(s string) string { return s }

// Warn returns s as it is.
func (PlainStyle) Warn(s string) string { return s }

// Unicode returns false: paths are drawn with ASCII.
func (PlainStyle) Unicode() bool { return false }

// Input returns "": the report names no input.
func (PlainStyle) Input(Reason) string { return "" }

// WriteText writes the report for people: a header with the dump's totals,
// then each group with its holder and the path from it.
func (r *Report) WriteText(w io.Writer, st Style) error {
	var b strings.Builder
	version := r.GoVersion
	if version == "" {
		version = "unknown Go version"
	}
	fmt.Fprintf(&b, "%s %s (%s)\n", st.Heading("heap dump"), r.Dump, version)
	if r.Binary != "" {
		fmt.Fprintf(&b, "  %-9s %s\n", "binary", r.Binary)
	}
	fmt.Fprintf(&b, "  %-9s %s in %d objects; %d goroutines\n", "live", bytesize.Format(int64(r.LiveBytes)), r.LiveObjects, r.Goroutines)
	fmt.Fprintf(&b, "  %-9s %s in %d objects (garbage not yet swept, unused span tails)\n", "dead", bytesize.Format(int64(r.DeadBytes)), r.DeadObjects)
	fmt.Fprintf(&b, "  %-9s %s in %d objects reached from more than one root\n", "shared", bytesize.Format(int64(r.SharedBytes)), r.SharedObjects)
	for _, u := range r.Unknown {
		label := "unknown"
		if u.Reason == PluginGlobals || u.Reason == CleanupClosures {
			label = "warning"
		}
		fmt.Fprintf(&b, "  %-9s %s\n", label, st.Warn(u.withInput(st.Input(u.Reason))))
	}
	if r.Leaks != nil {
		r.writeLeaks(&b, st)
	}
	b.WriteString("\n")
	min := bytesize.Format(int64(r.MinSize))
	more := "or more"
	if r.Together() {
		more += " (one global's groups counted together)"
	}
	switch {
	case r.GroupsTotal == 0:
		fmt.Fprintf(&b, "No object of %s or more is retained, and no root directly holds %s or more.\n", min, min)
	case len(r.Groups) == 0:
		fmt.Fprintf(&b, "No group matches (%s of %s or more in all).\n", english.Plural(r.GroupsTotal, "group"), min)
	case len(r.Groups) < r.GroupsTotal:
		fmt.Fprintf(&b, "%d of %s of %s %s, %s:\n", len(r.Groups), english.Plural(r.GroupsTotal, "group"), min, more, r.order())
	default:
		fmt.Fprintf(&b, "%s of %s %s, %s:\n", english.Plural(len(r.Groups), "group"), min, more, r.order())
	}
	r.writeOverlaps(&b, st)
	for i, g := range r.Groups {
		b.WriteString("\n")
		g.writeText(&b, fmt.Sprintf("#%d", i+1), st)
	}
	_, err := io.WriteString(w, textfit.Wrap(b.String(), styleWidth(st)))
	return err
}

// Text returns the group as WriteText shows it, headed by title, with its
// names escaped (Escaped).
func (g *Group) Text(title string, st Style) string {
	var b strings.Builder
	g.writeText(&b, title, st)
	return b.String()
}

func (g *Group) writeText(b *strings.Builder, title string, st Style) {
	g = g.Escaped()
	fmt.Fprintf(b, "%s %s\n", st.Bold(title), g.headline(st))
	if l := g.Leaked; l != nil && l.Count > 0 {
		fmt.Fprintf(b, "    %s\n", st.Warn(l.text(g.goroutineCount())))
	} else if l != nil {
		fmt.Fprintf(b, "    %s\n", st.Faint(notProven))
	}
	if m := g.Mechanism; m != nil {
		fmt.Fprintf(b, "    %s\n", m.parts(g))
	}
	if s := g.Object.AllocSite; s != nil {
		fmt.Fprintf(b, "    allocated at %s\n", s)
	}
	ind := "    "
	for _, line := range g.Root.lines(g.Goroutines, g.goroutineCount()) {
		fmt.Fprintf(b, "%s%s\n", ind, line)
	}
	if g.Shared {
		others := make([]string, len(g.OtherRoots))
		for i, h := range g.OtherRoots {
			others[i] = h.Short()
		}
		if more := g.OtherRootsTotal - len(g.OtherRoots); more > 0 {
			others = append(others, fmt.Sprintf("%d more", more))
		}
		if len(others) == 0 {
			fmt.Fprintf(b, "%s%s\n", ind, st.Warn("no single root holds it: the runtime's structures reach it too"))
		} else {
			fmt.Fprintf(b, "%s%s %s\n", ind, st.Warn("no single root holds it; also reached from"), strings.Join(others, ", "))
		}
	}
	writePath(b, ind, g.Path, st)
	g.writeMadeOf(b, ind, st)
}

// writeMadeOf writes what the group's first object retains, one part a
// line, and the path from it to one object of the largest part.
func (g *Group) writeMadeOf(b *strings.Builder, ind string, st Style) {
	if len(g.MadeOf) == 0 {
		return
	}
	whose := "it retains"
	if g.Count > 1 {
		whose = "the first retains"
	}
	of := ""
	if all := g.Objects; g.Count == 1 && all > 1 && g.MadeOfObjects < all-1 {
		of = fmt.Sprintf(" (counting the first %s of %s objects)", thousands(int(g.MadeOfObjects)), thousands(int(all-1)))
	}
	fmt.Fprintf(b, "%s%s, most bytes first%s:\n", ind, whose, of)
	for _, p := range g.MadeOf {
		t := p.Type
		if t == "" {
			t = "object of unknown type"
		}
		line := fmt.Sprintf("%s  %s %s %s of %s: %s", ind, thousands(int(p.Count)), times(st), t, bytesize.Format(int64(p.Size)), bytesize.Format(int64(p.Bytes)))
		b.WriteString(line + madeAt(p.AllocSite) + "\n")
	}
	if len(g.Inside) > 0 {
		t := g.MadeOf[0].Type
		if t == "" {
			t = "of them"
		}
		fmt.Fprintf(b, "%sthe path on to one %s:\n", ind, t)
		writePath(b, ind, g.Inside, st)
	}
}

// madeAt says where an object was made: " (made at main.open
// attach.go:31)", or "" for no site.
func madeAt(p *binsym.Position) string {
	if p == nil {
		return ""
	}
	s := " (made at " + p.Function
	if p.File != "" {
		s += " " + p.FileLine()
	}
	return s + ")"
}

// headline says what the group is and what it retains: "[]uint8 of 50.0
// MiB retains 50.0 MiB" for one object; for many, who holds them and how
// many there are: "2000 goroutines in main.wait (created at main.serve
// main.go:40) hold 8.1 MiB: 2000 x context.valueCtx of 48 B, retaining
// 4.1 KiB each".
func (g *Group) headline(st Style) string {
	obj := g.Object.Type
	if obj == "" {
		obj = "object of unknown type"
	}
	what := fmt.Sprintf("%s of %s", obj, bytesize.Format(int64(g.Object.Size)))
	total := st.Bold(bytesize.Format(int64(g.RetainedBytes)))
	if g.Count <= 1 {
		return fmt.Sprintf("%s retains %s", what, total)
	}
	who, verb := fmt.Sprintf("%s objects held the same way", thousands(g.Count)), "retain"
	if len(g.HeldBy) > 0 {
		who, verb = fmt.Sprintf("%s objects held together by %s", thousands(g.Count), english.List(heldByText(g.HeldBy))), "hold"
	}
	if g.NestedCount > 0 {
		// Counted once, with the outermost: say so, or the bytes each
		// retains would not add up to the total.
		who += fmt.Sprintf(", %s of them inside another,", thousands(g.NestedCount))
	}
	// Holdings are held one per timer or defer: count those.
	if g.Root.Kind == heapdump.RootTimer && g.Holding {
		who, verb = thousands(g.Count)+" timers", "hold"
		if g.Root.Function != "" {
			who += " that will run " + g.Root.Function
		}
	}
	if g.Root.Kind == heapdump.RootDefer && g.Holding {
		who, verb = fmt.Sprintf("%s defers in %s", thousands(g.Count), g.Root.Function), "hold"
		if n := g.goroutineCount(); n > 1 {
			who += " of " + goroutines(g.Goroutines, n)
		} else {
			who += fmt.Sprintf(" (goroutine %d)", g.Root.Goroutine)
		}
	}
	if n := g.goroutineCount(); n > 1 && (g.Root.Kind == heapdump.RootFrame || g.Root.Kind == heapdump.RootGoroutine) {
		who, verb = fmt.Sprintf("%s goroutines", thousands(n)), "hold"
		if g.Root.Kind == heapdump.RootFrame {
			who += " in " + g.Root.Function
		}
		if c := g.Root.CreatedBy; c != nil {
			who += " (created at " + c.Function
			if c.File != "" {
				who += " " + c.FileLine()
			}
			who += ")"
		}
	}
	if m := g.Mechanism; m != nil {
		who, verb = m.who(g), "hold"
	}
	each := bytesize.Format(int64(g.EachMaxBytes))
	if g.EachMinBytes != g.EachMaxBytes {
		each = bytesize.Format(int64(g.EachMinBytes)) + " to " + each
	}
	line := fmt.Sprintf("%s %s %s: %s %s %s", who, verb, total, thousands(g.Count), times(st), what)
	if g.EachMaxBytes > 0 {
		line += fmt.Sprintf(", retaining %s each", each)
	}
	return line
}

// maxHeldByText is how many holder signatures a headline names: past it,
// it names one fewer and counts the rest.
const maxHeldByText = 5

// heldByText is the list of holder signatures a headline names: all of
// them, or the first and a count of the others ("3 more"). HeldBy lists
// globals and timers first, so that none hides in the count while a
// goroutine is named.
func heldByText(heldBy []string) []string {
	if len(heldBy) <= maxHeldByText {
		return heldBy
	}
	n := maxHeldByText - 1
	return append(slices.Clip(heldBy[:n]), fmt.Sprintf("%s more", thousands(len(heldBy)-n)))
}

// goroutineCount is the number of goroutines that hold the group's
// objects: GoroutineCount, or the ids listed when it is not set.
func (g *Group) goroutineCount() int { return max(g.GoroutineCount, len(g.Goroutines)) }

// times is the multiplication sign of "2000 x context.valueCtx".
func times(st Style) string {
	if st.Unicode() {
		return "×"
	}
	return "x"
}

// thousands formats n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// lines describes the holder in one to three lines; ids are the
// goroutines of a group's frames or goroutine holders, h's among them, the
// first of n.
func (h Holder) lines(ids []uint64, n int) []string {
	retains := fmt.Sprintf("retains %s in %s", bytesize.Format(int64(h.RetainedBytes)), english.Plural(int(h.Objects), "object"))
	if h.RetainedBytes == 0 {
		retains = "shares all it holds with other roots"
	}
	var out []string
	switch h.Kind {
	case heapdump.RootFrame:
		fn := h.Function + at(h.Location)
		if h.Unsure {
			fn += ", or the arguments of its callee " + h.Callee
		}
		if n > 1 {
			out = append(out, fmt.Sprintf("held by %s, frame %s", goroutines(ids, n), fn))
			out = append(out, h.createdBy()+fmt.Sprintf("the frame of goroutine %d %s", h.Goroutine, retains))
			break
		}
		out = append(out, fmt.Sprintf("held by goroutine %d [%s], frame %s", h.Goroutine, h.Status, fn))
		out = append(out, h.createdBy()+"the frame "+retains)
	case heapdump.RootGoroutine:
		if n > 1 {
			out = append(out, fmt.Sprintf("held by %s: %s", goroutines(ids, n), h.Detail))
			out = append(out, h.createdBy()+fmt.Sprintf("goroutine %d %s", h.Goroutine, retains))
			break
		}
		out = append(out, fmt.Sprintf("held by goroutine %d [%s]: %s", h.Goroutine, h.Status, h.Detail))
		out = append(out, h.createdBy()+"it "+retains)
	case heapdump.RootDefer:
		// Worded as a frame's, which it is, then what of the frame.
		fn := h.Function + at(h.Location)
		if n > 1 {
			out = append(out, fmt.Sprintf("held by %s, frame %s: %s", goroutines(ids, n), fn, h.Detail))
		} else {
			out = append(out, fmt.Sprintf("held by goroutine %d [%s], frame %s: %s", h.Goroutine, h.Status, fn, h.Detail))
		}
		out = append(out, h.createdBy()+"the frame "+retains)
	case heapdump.RootPanic:
		out = append(out, fmt.Sprintf("held by a panic in goroutine %d [%s]: %s", h.Goroutine, h.Status, h.Detail))
		out = append(out, h.createdBy()+"the panic "+retains)
	case heapdump.RootGlobal:
		out = append(out, fmt.Sprintf("held by global %s (%s), which %s", h.Global, h.Detail, retains))
	case heapdump.RootTimer:
		if h.Function == "" {
			out = append(out, "held by a timer ("+h.Detail+"; what it will run is not named)")
		} else {
			out = append(out, fmt.Sprintf("held by a timer that will run %s%s", h.Function, at(h.Location)))
		}
		created := "created at an unknown place"
		if h.Creator != nil {
			created = "created at " + h.Creator.String()
		}
		out = append(out, fmt.Sprintf("%s; the timer %s", created, retains))
	case heapdump.RootFinalizer:
		fn := "a finalizer"
		if h.Function != "" {
			fn = "finalizer " + h.Function + at(h.Location)
		}
		if h.Detail != "" {
			fn += " (" + h.Detail + ")"
		}
		out = append(out, fmt.Sprintf("held by %s, which %s", fn, retains))
	default:
		out = append(out, fmt.Sprintf("held by a runtime root (%s), which %s", h.Detail, retains))
	}
	return out
}

// Short names the holder in a few words, its names escaped (Escaped):
// "goroutine 12 frame main.loop",
// "global main.cache", "timer main.retry.func1".
func (h Holder) Short() string {
	h = h.escaped()
	switch h.Kind {
	case heapdump.RootFrame:
		return fmt.Sprintf("goroutine %d frame %s", h.Goroutine, h.Function)
	case heapdump.RootGoroutine:
		return fmt.Sprintf("goroutine %d", h.Goroutine)
	case heapdump.RootDefer:
		return fmt.Sprintf("goroutine %d frame %s (a defer)", h.Goroutine, h.Function)
	case heapdump.RootPanic:
		return fmt.Sprintf("panic in goroutine %d", h.Goroutine)
	case heapdump.RootGlobal:
		return "global " + h.Global
	case heapdump.RootTimer:
		if h.Function == "" {
			return "timer"
		}
		return "timer " + h.Function
	case heapdump.RootFinalizer:
		return "finalizer " + h.Function
	}
	return h.Kind.String() + " " + h.Detail
}

// Short names the group's holder in a few words, as Holder.Short does,
// with the count and ids of the goroutines when there are several:
// "3 goroutines (12, 14 and 15) frame main.loop".
func (g *Group) Short() string {
	h := g.Root.escaped()
	if n := g.goroutineCount(); n > 1 {
		switch h.Kind {
		case heapdump.RootFrame:
			return goroutines(g.Goroutines, n) + " frame " + h.Function
		case heapdump.RootGoroutine:
			return goroutines(g.Goroutines, n)
		}
	}
	return h.Short()
}

// maxGoroutineIDs is how many goroutine ids a group's text lists.
const maxGoroutineIDs = 8

// goroutines counts n goroutines and lists the first of ids: "3
// goroutines (12, 14 and 15)", "20 goroutines (3, 4, 5, 6, 7, 8, 9, 10
// and 12 more)".
func goroutines(ids []uint64, n int) string {
	n = max(n, len(ids))
	list := make([]string, 0, min(len(ids), maxGoroutineIDs)+1)
	for _, id := range ids[:min(len(ids), maxGoroutineIDs)] {
		list = append(list, strconv.FormatUint(id, 10))
	}
	if more := n - len(list); more > 0 {
		list = append(list, fmt.Sprintf("%s more", thousands(more)))
	}
	return fmt.Sprintf("%s goroutine%s (%s)", thousands(n), plural(n), english.List(list))
}

// plural is "s" but for 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// createdBy says where the holder's goroutine was created, ending in "; ".
func (h Holder) createdBy() string {
	if h.CreatedBy == nil {
		return ""
	}
	return "created at " + h.CreatedBy.String() + "; "
}

// at formats a site's position as " (dir/file.go:12)", or "" for none.
func at(s *binsym.Position) string {
	if s == nil || s.File == "" {
		return ""
	}
	return " (" + s.FileLine() + ")"
}

// writePath draws the steps of a path, one a line, the sizes aligned:
// past the style's width, long names are shortened from the left.
func writePath(b *strings.Builder, ind string, path []Step, st Style) {
	mid, last := "|- ", "`- "
	if st.Unicode() {
		mid, last = "├─ ", "└─ "
	}
	names := make([]string, len(path))
	retains := make([]string, len(path))
	width, tail := 0, 0
	for i, s := range path {
		if s.Omitted > 0 {
			continue
		}
		t := s.Type
		if t == "" {
			t = "?"
		}
		names[i] = t
		if s.Via != "" {
			names[i] = s.Via + " -> " + t
		}
		if s.Key != "" {
			names[i] += " (key " + s.Key + ")"
		}
		names[i] += madeAt(s.AllocSite)
		width = max(width, textfit.Len(names[i]))
		if s.RetainedBytes > s.Size {
			retains[i] = fmt.Sprintf("  retains %s in %s", bytesize.Format(int64(s.RetainedBytes)), english.Plural(int(s.Objects), "object"))
			tail = max(tail, len(retains[i]))
		}
	}
	if w := styleWidth(st); w > 0 {
		// The indent, the branch, a space and the size take the rest.
		width = min(width, max(minPathName, w-len(ind)-3-1-10-tail))
	}
	for i, s := range path {
		branch := mid
		if i == len(path)-1 {
			branch = last
		}
		if s.Omitted > 0 {
			b.WriteString(ind + branch + omitted(s, st) + "\n")
			continue
		}
		name := textfit.Shorten(names[i], width)
		pad := strings.Repeat(" ", max(0, width-textfit.Len(name)))
		size := fmt.Sprintf("%10s", bytesize.Format(int64(s.Size)))
		line := fmt.Sprintf("%s%s%s%s %s", ind, branch, name, pad, size)
		if retains[i] != "" {
			line += st.Faint(retains[i])
		}
		b.WriteString(line + "\n")
	}
}

// omitted says what a step that stands for steps left out stands for:
// "... 999,950 more steps through main.node.next ...".
func omitted(s Step, st Style) string {
	dots := "..."
	if st.Unicode() {
		dots = "…"
	}
	through := s.Type + s.Via
	if s.Type == "" {
		through = "objects of unknown type"
	}
	return st.Faint(fmt.Sprintf("%s %s more step%s through %s %s", dots, thousands(s.Omitted), plural(s.Omitted), through, dots))
}

// minPathName is the narrowest a path's names are shortened to.
const minPathName = 24

// maxOverlapLines is how many overlaps WriteText lists; the JSON lists
// them all.
const maxOverlapLines = 8

// writeOverlaps says what the groups count more than once, and which group
// is inside which.
func (r *Report) writeOverlaps(b *strings.Builder, st Style) {
	if r.OverlapBytes == 0 {
		return
	}
	fmt.Fprintf(b, "%s\n", st.Warn(fmt.Sprintf("The groups overlap: %s is counted in more than one of them.", bytesize.Format(int64(r.OverlapBytes)))))
	for i, o := range r.Overlaps {
		if i == maxOverlapLines {
			fmt.Fprintf(b, "  and %d more\n", len(r.Overlaps)-i)
			break
		}
		fmt.Fprintf(b, "  %s of #%d is inside #%d\n", bytesize.Format(int64(o.Bytes)), o.Group, o.Within)
	}
}
