package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/profiles"
)

// progress draws one status line on a terminal while profiles load.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	last  time.Time
	shown bool
	// now is the clock; nil means time.Now.
	now func() time.Time
}

func (p *progress) report(pr profiles.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.now != nil {
		now = p.now()
	}
	if p.shown && now.Sub(p.last) < 100*time.Millisecond && pr.Phase != "parse" {
		return
	}
	p.last = now
	p.shown = true
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
	fmt.Fprintf(p.w, "\r\x1b[2K%s", msg)
}

// clear erases the status line, if one was drawn.
func (p *progress) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[2K")
		p.shown = false
	}
}
