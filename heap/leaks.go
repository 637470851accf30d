package heap

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// Leaks names the goroutines Go 1.27's goroutineleak profile proved
// leaked (blocked for ever on channels or locks nothing runnable reaches),
// for Holders to mark the groups they hold (LeakedGoroutines). The profile
// must come from the process that wrote the dump, taken after it: a dump
// after the profile kills the process.
type Leaks struct {
	// IDs are the leaked goroutines by id, each with its stack (Count
	// unused), as the runtime's traceback of all goroutines
	// (/debug/pprof/goroutineleak?debug=2) marks them "(leaked)". A
	// goroutine of the dump with the id matches when it has the stack's
	// functions too: ids of another process or run name other goroutines.
	IDs map[uint64]LeakedStack
	// Stacks are the profile's stacks, for a profile without ids (its
	// proto and debug=1 forms): the goroutines of the dump with the same
	// functions and wait reason are the leaked ones, at most Count each.
	Stacks []LeakedStack
}

// LeakedStack is one stack of a goroutineleak profile.
type LeakedStack struct {
	// Functions are the functions of the stack, innermost first, calls
	// inlined included; those of package runtime and the wrappers of go
	// and defer statements are not compared. Without the executable
	// (Analysis.Binary) the dump's goroutines are known by their frames'
	// own functions only: a stack with inlined calls matches none.
	Functions []string
	// Wait is the wait reason the stack blocks in ("chan send"), or ""
	// when the profile does not say: then it is not compared.
	Wait  string
	Count int
}

// LeakedGoroutines has Holders mark the groups held by goroutines that l
// names, list them first and say how the profile's goroutines matched the
// dump's (Report.Leaks). It is an option of Holders.
func LeakedGoroutines(l *Leaks) Option { return Option{func(o *options) { o.leaks = l }} }

// GroupLeak says how many of a group's goroutines were proven leaked.
type GroupLeak struct {
	// Count is the number of the group's goroutines proven leaked, of its
	// GoroutineCount: 0 for goroutines held but not proven leaked (the
	// profile cannot see those blocked on something a global or a
	// runnable goroutine reaches).
	Count int `json:"goroutine_count"`
	// Wait is the wait reason of the first: "chan send"; "" for none.
	Wait string `json:"wait"`
	// RetainedBytes is what the members those goroutines hold retain:
	// the group's RetainedBytes when all its goroutines are leaked.
	RetainedBytes uint64 `json:"retained_bytes"`
}

// LeakMatch says how the leaked goroutines of a profile matched the dump:
// Total is InGroups + NotShown + HoldNothing + NotInDump + OtherStack.
type LeakMatch struct {
	// By is "goroutine_id" or "stack".
	By    string `json:"matched_by"`
	Total int    `json:"leaked_count"`
	// InGroups are in the groups reported, Groups of which have them;
	// RetainedBytes adds up what they retain in those groups (bytes two
	// groups share are in OverlapBytes).
	InGroups      int    `json:"in_groups_count"`
	Groups        int    `json:"group_count"`
	RetainedBytes uint64 `json:"retained_bytes"`
	// NotShown are only in groups Top or Focus left out.
	NotShown int `json:"not_shown_count"`
	// HoldNothing are in the dump but hold nothing of MinSize or more.
	HoldNothing int `json:"hold_nothing_count"`
	// NotInDump are ids, or counts of stacks, found in no goroutine of
	// the dump: the profile was taken in another process, or before the
	// dump, or they ended between the two.
	NotInDump int `json:"not_in_dump_count"`
	// OtherStack are ids found in the dump on goroutines with other
	// functions: the profile is of another process or run (matched by id).
	OtherStack int `json:"other_stack_count"`
	// Unmarked counts goroutines of the dump with a leaked stack past the
	// profile's count for it, not marked (matched by stack only).
	Unmarked int `json:"unmarked_count"`
}

// matchLeaks returns the dump's goroutines that l names, by id, with their
// wait reasons, and the match with its Total, NotInDump and Unmarked set.
func (a *Analysis) matchLeaks(l *Leaks) (map[uint64]string, *LeakMatch) {
	d := a.d
	leaked := make(map[uint64]string)
	var funcs []string
	if l.Stacks == nil {
		m := &LeakMatch{By: "goroutine_id", Total: len(l.IDs)}
		found := 0
		for i, g := range d.Goroutines {
			s, ok := l.IDs[g.ID]
			if !ok {
				continue
			}
			found++
			funcs = a.goroutineFuncs(funcs[:0], i)
			if stackKey(funcs, "") != stackKey(s.Functions, "") {
				m.OtherStack++
				continue
			}
			leaked[g.ID] = cmp.Or(s.Wait, d.WaitReason(i))
		}
		m.NotInDump = m.Total - found
		return leaked, m
	}
	m := &LeakMatch{By: "stack"}
	left := make(map[string]int) // by stackKey: the count not yet matched
	for _, s := range l.Stacks {
		n := max(s.Count, 0)
		m.Total += n
		left[stackKey(s.Functions, s.Wait)] += n
	}
	// In id order, so that which goroutines get a stack's count is
	// decided the same way every time.
	order := make([]int, 0, len(d.Goroutines))
	for i, g := range d.Goroutines {
		if !g.System {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(d.Goroutines[x].ID, d.Goroutines[y].ID) })
	for _, i := range order {
		g := d.Goroutines[i]
		funcs = a.goroutineFuncs(funcs[:0], i)
		wait := d.WaitReason(i)
		for _, k := range []string{stackKey(funcs, wait), stackKey(funcs, "")} {
			n, ok := left[k]
			if !ok || k == "" {
				continue
			}
			if n == 0 {
				m.Unmarked++
				break
			}
			left[k] = n - 1
			leaked[g.ID] = wait
			break
		}
	}
	for _, n := range left {
		m.NotInDump += n
	}
	return leaked, m
}

// goroutineFuncs appends the functions of goroutine i of the dump to
// funcs, innermost first (logicalFuncs).
func (a *Analysis) goroutineFuncs(funcs []string, i int) []string {
	g := a.d.Goroutines[i]
	for f := g.FirstFrame; f < g.FirstFrame+g.NumFrames && f < len(a.d.Frames); f++ {
		funcs = a.logicalFuncs(funcs, f)
	}
	return funcs
}

// logicalFuncs appends the functions of frame f of the dump to funcs:
// with the executable, the calls inlined into it, innermost first, then
// its own; without, its own.
func (a *Analysis) logicalFuncs(funcs []string, f int) []string {
	fn := a.d.FrameFunc(f)
	if a.Binary == nil || strings.HasPrefix(fn, "runtime.") {
		return append(funcs, fn)
	}
	cs, ok := a.siteOf(a.d.Frames[f].PC)
	if !ok {
		return append(funcs, fn)
	}
	fs := a.Binary.Frames(cs.PC)
	if len(fs) == 0 || fs[len(fs)-1].Function != fn {
		return append(funcs, fn)
	}
	for _, fr := range fs {
		funcs = append(funcs, fr.Function)
	}
	return funcs
}

// stackKey is the key a stack matches by: its functions outside package
// runtime, innermost first, and its wait reason; "" for a stack with no
// such function, which matches no stack (but an id's, Leaks.IDs).
func stackKey(funcs []string, wait string) string {
	var b strings.Builder
	for _, f := range funcs {
		if !strings.HasPrefix(f, "runtime.") && !isWrapper(f) {
			b.WriteString(f)
			b.WriteByte(0)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteByte(1)
	b.WriteString(wait)
	return b.String()
}

// notProven is what a group of goroutines none of which the profile
// proved leaked is marked with.
const notProven = "not proven leaked: blocked on something a global or a runnable goroutine reaches, or not blocked (what the goroutineleak profile cannot see)"

// markLeaked sets the leak of each of ps held by goroutines (a zero one
// for those held by none of leaked), and moves the groups with leaked
// goroutines first, in their order.
func markLeaked(ps []*pending, leaked map[uint64]string) {
	for _, p := range ps {
		if len(p.goroutines) == 0 {
			continue
		}
		p.leak = &GroupLeak{}
		gl := p.leak
		for _, id := range p.goroutines {
			wait, ok := leaked[id]
			if !ok {
				continue
			}
			if gl.Count == 0 {
				gl.Wait = textsafe.Escape(wait)
			}
			gl.Count++
		}
		if gl.Count == 0 {
			continue
		}
		gl.RetainedBytes = min(p.leakedBytes, p.retained)
		if gl.Count == len(p.goroutines) {
			gl.RetainedBytes = p.retained
		}
	}
	slices.SortStableFunc(ps, func(x, y *pending) int {
		return cmp.Compare(boolRank(!x.leaked()), boolRank(!y.leaked()))
	})
}

// isWrapper reports whether fn is the wrapper the compiler makes for a go
// or defer statement with arguments ("main.main.gowrap1"), which
// tracebacks and profiles leave out.
func isWrapper(fn string) bool {
	i := strings.LastIndexByte(fn, '.')
	name := fn[i+1:]
	for _, w := range []string{"gowrap", "deferwrap"} {
		if n, ok := strings.CutPrefix(name, w); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	return false
}

// leaked reports whether goroutines proven leaked hold the group.
func (p *pending) leaked() bool { return p.leak != nil && p.leak.Count > 0 }

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countLeaks fills InGroups, Groups, RetainedBytes, NotShown and
// HoldNothing of m from the groups ps, of which number gives those
// reported.
func countLeaks(m *LeakMatch, ps []*pending, number map[*pending]int, leaked map[uint64]string) {
	in, out := make(map[uint64]bool), make(map[uint64]bool)
	for _, p := range ps {
		if !p.leaked() {
			continue
		}
		set := out
		if number[p] > 0 {
			set = in
			m.Groups++
			m.RetainedBytes += p.leak.RetainedBytes
		}
		for _, id := range p.goroutines {
			if _, ok := leaked[id]; ok {
				set[id] = true
			}
		}
	}
	for id := range in {
		delete(out, id)
	}
	m.InGroups, m.NotShown = len(in), len(out)
	m.HoldNothing = len(leaked) - m.InGroups - m.NotShown // leaked has the goroutines found in the dump
}

// order says how the report's groups are ordered.
func (r *Report) order() string {
	if r.Leaks != nil && r.Leaks.Groups > 0 {
		return "those of proven-leaked goroutines first, then most retained first"
	}
	return "most retained first"
}

// writeLeaks writes how the profile's leaked goroutines matched the dump:
// one line for those in the groups, one for each reason others are not.
func (r *Report) writeLeaks(b *strings.Builder, st Style) {
	m := r.Leaks
	by := "by goroutine id"
	if m.By == "stack" {
		by = "by stack (the profile has no goroutine ids; its debug=2 form has)"
	}
	fmt.Fprintf(b, "  %-9s %s proven leaked by the goroutineleak profile, matched %s\n", "leaked", thousands(m.Total)+" "+english.Noun(m.Total, "goroutine"), by)
	min := bytesize.Format(int64(r.MinSize))
	for _, l := range []struct {
		n    int
		text string
	}{
		{m.InGroups, fmt.Sprintf("in %s below, retaining %s", english.Plural(m.Groups, "group"), bytesize.Format(int64(m.RetainedBytes)))},
		{m.NotShown, "in groups not shown (--top, --focus)"},
		{m.HoldNothing, fmt.Sprintf("hold nothing of %s or more", min)},
		{m.NotInDump, notInDump(m, r.Binary == "", st)},
		{m.OtherStack, "have ids of goroutines of the dump with other stacks: the profile is of another process or run"},
		{m.Unmarked, "more goroutines of the dump have a leaked stack than the profile counts for it: not marked"},
	} {
		if l.n > 0 {
			fmt.Fprintf(b, "  %-9s %s %s\n", "", thousands(l.n), l.text)
		}
	}
}

// notInDump says why leaked goroutines were found in no goroutine of the
// dump.
func notInDump(m *LeakMatch, noBinary bool, st Style) string {
	why := "found in no goroutine of the dump: the profile was taken in another process or before the dump, or they ended in between"
	if m.By == "stack" && noBinary {
		why += "; or their stacks have inlined calls, which the dump's frames show with the executable only"
		if in := st.Input(NoBinary); in != "" {
			why += " (give " + in + ")"
		}
	}
	return why
}

// text says what the mark means: "1,500 goroutines leaked for ever:
// blocked in chan send on a channel nothing runnable reaches (proven by
// the goroutineleak profile); they retain 23.4 MiB".
func (l *GroupLeak) text(of int) string {
	who := "its goroutine"
	switch {
	case of > 1 && l.Count == of:
		who = fmt.Sprintf("all %s goroutines", thousands(of))
	case of > 1:
		who = fmt.Sprintf("%s of %s goroutines", thousands(l.Count), thousands(of))
	}
	return fmt.Sprintf("leaked for ever: %s blocked in %s on %s nothing runnable reaches (proven by the goroutineleak profile), retaining %s",
		who, cmp.Or(l.Wait, "a wait"), blockedThing(l.Wait), bytesize.Format(int64(l.RetainedBytes)))
}

// blockedThing names what a goroutine in the wait reason waits on.
func blockedThing(wait string) string {
	switch {
	case strings.HasPrefix(wait, "chan "):
		return "a channel"
	case strings.HasPrefix(wait, "select"):
		return "channels"
	case strings.Contains(wait, "WaitGroup"):
		return "a WaitGroup"
	case strings.Contains(wait, "Cond"):
		return "a condition variable"
	case strings.Contains(wait, "Mutex"), strings.Contains(wait, "sync"):
		return "a lock"
	}
	return "something"
}
