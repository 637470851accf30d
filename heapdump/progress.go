package heapdump

import "sync/atomic"

// readProgress counts the bytes of records that the parsers of a dump have
// read, for Options.Progress: the main parser's and those of the helper's
// parts, which read further on at the same time.
type readProgress struct {
	read   atomic.Int64
	size   int64                  // the file's
	step   int64                  // bytes a reader reads between two counts
	next   int64                  // count from which the main parser reports next
	report func(read, size int64) // Options.Progress
}

// newReadProgress returns the progress of reading a file of size bytes,
// reported about every 1% of it, or nil if report is nil. The step is 1%
// rounded up: rounded down, a small file's steps are smaller than 1%
// (1,085 bytes: 10, and 108 reports).
func newReadProgress(size int64, report func(read, size int64)) *readProgress {
	if report == nil {
		return nil
	}
	report(0, size)
	step := max((size+99)/100, 1)
	return &readProgress{size: size, step: step, next: step, report: report}
}

// countRead adds what r read since it last counted to its progress, if
// that is a step or more, or all of it if flush is set.
func (r *reader) countRead(flush bool) {
	pr := r.progress
	if pr == nil {
		return
	}
	off := r.off()
	if d := off - r.counted; d > 0 && (flush || d >= pr.step) {
		pr.read.Add(d)
		r.counted = off
	}
}

// reportRead has the main parser report the bytes read, once a step more
// of them than at its last report, at most the file's size: a part that
// the main parser drops is read twice.
func (p *parser) reportRead() {
	pr := p.r.progress
	if pr == nil {
		return
	}
	p.r.countRead(false)
	if n := pr.read.Load(); n >= pr.next {
		pr.next = n + pr.step
		pr.report(min(n, pr.size), pr.size)
	}
}
