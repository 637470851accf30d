package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/ui"
	"github.com/ctxleak/ctxleak/profiles"
)

// progress draws one status line on a terminal while profiles load or a
// heap dump is read.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	last  time.Time
	shown bool
	// plain draws without escape codes (NO_COLOR, --color never): a
	// carriage return, and spaces over what is left of the last line.
	plain bool
	width int // of the last line drawn, for plain
	// now is the clock; nil means time.Now.
	now func() time.Time
}

// progressAlways draws the status line whatever stderr is: tests set it
// to see what a terminal would get.
var progressAlways bool

// newProgress returns a status line on stderr when stderr is a terminal
// (or a test says so), else nil: progress writes nothing to a pipe or a
// file. Its line has no escape code when --color or NO_COLOR say plain.
func (a *app) newProgress() *progress {
	if !ui.IsTerminal(a.stderr) && !progressAlways {
		return nil
	}
	mode, _ := ui.ParseMode(a.color)
	styled := mode == ui.Styled || (mode == ui.Auto && os.Getenv("NO_COLOR") == "")
	return &progress{w: a.stderr, plain: !styled}
}

// report shows how a profile's loading goes.
func (p *progress) report(pr profiles.Progress) {
	var what string
	switch pr.Phase {
	case "download":
		what = "downloading"
	case "read":
		what = "reading"
	case "decompress":
		what = "decompressing"
	default:
		what = "parsing"
	}
	msg := fmt.Sprintf("ctxleak: %s %s", what, pr.Source)
	if pr.Phase != "parse" {
		msg += " " + bytesize.Format(pr.Done)
		if pr.Total > 0 {
			msg += fmt.Sprintf(" of %s (%d%%)", bytesize.Format(pr.Total), min(100, pr.Done*100/pr.Total))
		}
	}
	p.show(msg, pr.Phase == "parse")
}

// heap returns a function that shows how the analysis of dump goes.
func (p *progress) heap(dump string) func(heap.Progress) {
	return func(pr heap.Progress) {
		switch pr.Phase {
		case heap.PhaseRead:
			msg := fmt.Sprintf("ctxleak: reading %s %s", dump, bytesize.Format(pr.Done))
			if pr.Total > 0 {
				msg += fmt.Sprintf(" of %s (%d%%)", bytesize.Format(pr.Total), min(100, pr.Done*100/pr.Total))
			}
			p.show(msg, false)
		case heap.PhaseGraph:
			p.show("ctxleak: building the object graph of "+dump, true)
		case heap.PhaseDominators:
			p.show("ctxleak: computing what each object retains in "+dump, true)
		}
	}
}

// show draws msg, unless the last line is less than 100ms old and msg
// does not start a phase (force).
func (p *progress) show(msg string, force bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.now != nil {
		now = p.now()
	}
	if p.shown && now.Sub(p.last) < 100*time.Millisecond && !force {
		return
	}
	p.last = now
	p.shown = true
	if !p.plain {
		fmt.Fprintf(p.w, "\r\x1b[2K%s", msg)
		return
	}
	n := len(msg)
	fmt.Fprintf(p.w, "\r%s%s", msg, strings.Repeat(" ", max(0, p.width-n)))
	p.width = n
}

// clear erases the status line, if one was drawn.
func (p *progress) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.shown {
		return
	}
	if p.plain {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	} else {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
	p.shown = false
}
