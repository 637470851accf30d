package heap

import "github.com/ctxleak/ctxleak/binsym"

// maxSites bounds the answers siteOf and frameLine keep: a program has a
// few thousand distinct return addresses, a hostile dump as many as frames.
const maxSites = 1 << 16

// siteOf is Binary.CallSite, kept by pc (up to maxSites): 80,000
// goroutines made at one go statement, blocked at one line, describe as
// one lookup each, not 80,000.
func (a *Analysis) siteOf(pc uint64) (binsym.Func, bool) {
	if s, ok := a.sites[pc]; ok {
		return s.f, s.ok
	}
	f, ok := a.Binary.CallSite(pc)
	if a.sites == nil {
		a.sites = map[uint64]knownSite{}
	}
	if len(a.sites) < maxSites {
		a.sites[pc] = knownSite{f, ok}
	}
	return f, ok
}

// knownSite is an answer of Binary.CallSite.
type knownSite struct {
	f  binsym.Func
	ok bool
}

// frameKey is what frameLine answers for.
type frameKey struct {
	fn string
	pc uint64
}

// frameLine returns the source position of a frame of function fn at pc
// (a return address): the line of fn itself, where the call is that code
// inlined into fn made (main.wait's call of sync.(*Mutex).Lock, not
// sync/mutex.go).
func (a *Analysis) frameLine(fn string, pc uint64) *binsym.Position {
	k := frameKey{fn, pc}
	if p, ok := a.frameLines[k]; ok {
		return p
	}
	p := a.lookUpFrameLine(fn, pc)
	if a.frameLines == nil {
		a.frameLines = map[frameKey]*binsym.Position{}
	}
	if len(a.frameLines) < maxSites {
		a.frameLines[k] = p // shared by the holders it describes, which do not change it
	}
	return p
}

// lookUpFrameLine is frameLine, without keeping its answer.
func (a *Analysis) lookUpFrameLine(fn string, pc uint64) *binsym.Position {
	if a.Binary == nil {
		return nil
	}
	cs, ok := a.siteOf(pc)
	if !ok {
		return nil
	}
	if fs := a.Binary.Frames(cs.PC); len(fs) > 1 && fs[len(fs)-1].Function == fn {
		return &binsym.Position{Function: fn, File: fs[len(fs)-1].File, Line: fs[len(fs)-1].Line}
	}
	return &binsym.Position{Function: fn, File: cs.File, Line: cs.Line}
}
