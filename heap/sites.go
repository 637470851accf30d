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
