package scenarios

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/english"
	"github.com/ctxleak/ctxleak/internal/textfit"
	"github.com/ctxleak/ctxleak/internal/ui"
)

// WriteText prints r as "ctxleak run" shows each scenario: its phases in a
// table, what held the payload at each, the mechanism and the verdict.
func (r *Result) WriteText(p *ui.Printer) {
	p.Print("")
	p.Print(p.Heading(r.Name) + "  " + verdictText(p, r.Verdict))
	p.Print(p.Faint(r.Description))
	if len(r.Phases) > 0 {
		perPayload := r.Payloads > 1
		t := ui.Table{
			Headers: []string{"phase", "payload", "heap vs base", "RSS vs base", "GC to free", "alloc site"},
			Short:   []string{"phase", "payload", "heap", "RSS", "GCs", "at site"},
			Right:   []int{2, 3, 4, 5},
		}
		if perPayload {
			t.Short = append(t.Short, "per req")
			t.Headers = append(t.Headers, "heap per request")
			t.Right = append(t.Right, 6)
		}
		for _, ph := range r.Phases {
			row := []string{
				ph.Name,
				payloadCell(p, r, ph),
				bytesize.FormatDelta(ph.HeapDeltaBytes),
				bytesize.FormatDelta(ph.RSSDeltaBytes),
				gcCell(ph),
				bytesize.Format(ph.SiteBytes),
			}
			if perPayload {
				cell := "-"
				if ph.PerPayloadHeapBytes != nil {
					cell = bytesize.FormatDelta(*ph.PerPayloadHeapBytes)
				}
				row = append(row, cell)
			}
			t.Rows = append(t.Rows, row)
		}
		p.Print(p.Table(t))
		r.writeHolders(p)
		r.writeLeaked(p)
	}
	p.Print("mechanism: " + r.Mechanism)
	switch r.Verdict {
	case AsExpected:
		p.Print("verdict:   " + p.Good("as expected") + ": " + r.Expect)
	case NotAsExpected:
		p.Print("verdict:   " + p.Bad("NOT as expected") + ": " + r.Error)
		p.Print("expected:  " + r.Expect)
	default:
		p.Print("verdict:   " + p.Bad("error") + ": " + indent(r.Error))
	}
	switch {
	case r.Payloads > 0:
		p.Print(p.Faint(fmt.Sprintf("payload %s in %s; child peak RSS %s, %s",
			bytesize.Format(r.PayloadBytes), english.Plural(r.Payloads, "object"), bytesize.Format(r.PeakRSSBytes), wallText(r.WallMillis))))
	case r.PeakRSSBytes > 0:
		p.Print(p.Faint(fmt.Sprintf("child peak RSS %s, %s", bytesize.Format(r.PeakRSSBytes), wallText(r.WallMillis))))
	}
	if r.Attempts > 1 {
		p.Print(p.Warn(fmt.Sprintf("ran %d times: its timer fired before the measurements finished, so the delay was doubled each time",
			r.Attempts)))
	}
	if r.ProfileDir != "" {
		p.Print(p.Faint("heap profiles: " + r.ProfileDir))
	}
}

// writeHolders prints, when holders were looked for, what held the
// payload at each phase and the path from there to it.
func (r *Result) writeHolders(p *ui.Printer) {
	looked := false
	width := 0
	for _, ph := range r.Phases {
		if ph.Holder != "" || ph.HolderError != "" {
			looked = true
		}
		width = max(width, len(ph.Name))
	}
	if !looked {
		return
	}
	p.Print("held by:")
	pad := func(s string) string { return s + strings.Repeat(" ", width-len(s)) }
	// Lines too long for the terminal go on under the holder column.
	print := func(line string) { p.Print(textfit.Hang(line, p.Width(), 2+width+2)) }
	for _, ph := range r.Phases {
		switch {
		case ph.HolderError != "":
			print("  " + pad(ph.Name) + "  " + p.Bad("unknown: "+ph.HolderError))
		case ph.Holder != "":
			holder := ph.Holder
			if !ph.AsExpected && ph.Alive == ph.ExpectAlive {
				holder = p.Bad(holder)
			}
			print("  " + pad(ph.Name) + "  " + holder)
			for _, d := range ph.HolderDetail {
				print("  " + strings.Repeat(" ", width) + "  " + p.Faint("via "+d.PathText()))
			}
		case ph.Alive:
			print("  " + pad(ph.Name) + "  " + p.Faint("not looked for"))
		default:
			print("  " + pad(ph.Name) + "  " + p.Faint("nothing: the payload is freed"))
		}
	}
}

// writeLeaked prints, on a Go with the goroutineleak profile, what it
// reported at each phase: the goroutines it proved leaked, or none, or
// why it was not taken there.
func (r *Result) writeLeaked(p *ui.Printer) {
	width, taken := 0, false
	for _, ph := range r.Phases {
		width = max(width, len(ph.Name))
		taken = taken || ph.LeakProfile == LeakTaken
	}
	if !taken {
		return
	}
	p.Print("leak profile:")
	for _, ph := range r.Phases {
		line := "  " + ph.Name + strings.Repeat(" ", width-len(ph.Name)) + "  "
		switch {
		case ph.LeakProfile != LeakTaken:
			line += p.Faint(ph.LeakProfile + ": a later phase writes a heap dump, which the profile would forbid")
		case ph.ExpectLeaked != "" && !ph.AsExpected && !leakMatches(ph):
			line += p.Bad(ph.Leaked)
		case ph.Leaked != "none":
			line += p.Warn(ph.Leaked)
		default:
			line += ph.Leaked
		}
		p.Print(textfit.Hang(line, p.Width(), 2+width+2))
	}
}

// payloadCell says whether the payload was alive, with the count when
// there are several, and the expectation when it was not met.
func payloadCell(p *ui.Printer, r *Result, ph PhaseResult) string {
	s := aliveWord(ph.Alive)
	if r.Payloads > 1 {
		s += fmt.Sprintf(" %d/%d", ph.AlivePayloads, r.Payloads)
	}
	if !ph.AsExpected {
		want := "want " + aliveWord(ph.ExpectAlive)
		switch {
		case ph.Alive == ph.ExpectAlive && ph.Alive:
			want = "unexpected holder"
		case ph.Alive == ph.ExpectAlive:
			want = "unexpected GC cycles"
		}
		return p.Bad(s + " (" + want + ")")
	}
	if ph.Alive {
		return p.Warn(s)
	}
	return s
}

func gcCell(ph PhaseResult) string {
	if ph.GCCycles == 0 {
		return "-"
	}
	return strconv.Itoa(ph.GCCycles)
}

func verdictText(p *ui.Printer, v string) string {
	switch v {
	case AsExpected:
		return p.Good(v)
	case NotAsExpected:
		return p.Bad("NOT as expected")
	default:
		return p.Bad(v)
	}
}

func wallText(ms int64) string {
	return fmt.Sprintf("%.2f s", float64(ms)/1000)
}

// indent indents the continuation lines of a multi-line message.
func indent(s string) string {
	return strings.ReplaceAll(s, "\n", "\n    ")
}

// WriteSummaryText prints the summary "ctxleak run" closes with: one row
// per scenario and how many were as expected.
func (rep *Report) WriteSummaryText(p *ui.Printer) {
	p.Print("")
	p.Print(p.Heading("summary"))
	t := ui.Table{
		Headers: []string{"scenario", "verdict", "payload by phase", "peak RSS", "time"},
		Right:   []int{3, 4},
	}
	var good int
	var wall int64
	for _, r := range rep.Scenarios {
		if r.Verdict == AsExpected {
			good++
		}
		wall += r.WallMillis
		var phases []string
		for _, ph := range r.Phases {
			w := aliveWord(ph.Alive)
			if ph.GCCycles > 1 {
				w += fmt.Sprintf(" (%d GCs)", ph.GCCycles)
			}
			phases = append(phases, w)
		}
		byPhase := strings.Join(phases, " > ")
		if byPhase == "" {
			byPhase = "-"
		}
		rss := "-"
		if r.PeakRSSBytes > 0 {
			rss = bytesize.Format(r.PeakRSSBytes)
		}
		t.Rows = append(t.Rows, []string{r.Name, verdictText(p, r.Verdict), byPhase, rss, wallText(r.WallMillis)})
	}
	p.Print(p.Table(t))
	line := fmt.Sprintf("%d of %s as expected (%s in children)", good, english.Plural(len(rep.Scenarios), "scenario"), wallText(wall))
	if good == len(rep.Scenarios) {
		p.Print(p.Good(line))
	} else {
		p.Print(p.Bad(line))
	}
	if rep.leakProfileTaken() {
		p.Print(p.Faint("leak profile: " + LeakProfileLimit))
	}
}

// leakProfileTaken reports whether the goroutineleak profile was taken at
// any phase of the report.
func (rep *Report) leakProfileTaken() bool {
	for _, r := range rep.Scenarios {
		for _, ph := range r.Phases {
			if ph.LeakProfile == LeakTaken {
				return true
			}
		}
	}
	return false
}

// WriteText prints l as "ctxleak run --list" shows it: each scenario, what
// it does, its expected outcome and its phases.
func (l Listing) WriteText(p *ui.Printer) {
	for i, s := range l.Scenarios {
		if i > 0 {
			p.Print("")
		}
		var phases []string
		for _, ph := range s.Phases {
			phases = append(phases, ph.Name+" ("+aliveWord(ph.ExpectAlive)+")")
		}
		p.Print(p.Heading(s.Name))
		p.Print("  " + s.Description)
		p.Print("  expected:  " + s.Expect)
		p.Print("  phases:    " + strings.Join(phases, " > "))
		p.Print("  mechanism: " + p.Faint(s.Mechanism))
		p.Print("  leak profile (Go 1.27+): " + s.ExpectLeakProfile)
	}
	if len(l.Scenarios) > 0 {
		p.Print("")
		p.Print(p.Faint("leak profile: " + LeakProfileLimit))
	}
}

// leakMatches reports whether what the goroutineleak profile reported at
// ph matches the expectation it was judged by.
func leakMatches(ph PhaseResult) bool {
	ok, err := regexp.MatchString(ph.ExpectLeaked, ph.Leaked)
	return ok && err == nil
}
