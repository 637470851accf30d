package profiles

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/ctxleak/ctxleak/binsym"
)

// HeapReport is what is in use in one or more heap profiles, by allocation
// site, and how it grew against a base.
type HeapReport struct {
	// InuseBytes and InuseObjects add up inuse_space and inuse_objects over
	// the samples kept by Focus and Ignore: with neither set, the totals
	// "go tool pprof -top -sample_index=inuse_space" shows.
	InuseBytes   int64 `json:"inuse_bytes"`
	InuseObjects int64 `json:"inuse_objects"`
	// RequestBytes and RequestObjects are the part allocated on a request
	// path: request-scoped memory still in use.
	RequestBytes   int64 `json:"request_bytes"`
	RequestObjects int64 `json:"request_objects"`
	// Base is nil without a base profile.
	Base *HeapGrowth `json:"base,omitempty"`
	// Sites are all allocation sites, largest growth first with a base,
	// else most bytes in use first.
	Sites []AllocSite `json:"sites"`
}

// HeapGrowth compares a heap report with its base.
type HeapGrowth struct {
	// InuseBytes and InuseObjects are the base's totals.
	InuseBytes   int64 `json:"inuse_bytes"`
	InuseObjects int64 `json:"inuse_objects"`
	// GrowthBytes and GrowthObjects are the profile's totals minus the
	// base's: what "go tool pprof -top -diff_base" shows.
	GrowthBytes   int64 `json:"growth_bytes"`
	GrowthObjects int64 `json:"growth_objects"`
	// NewSites counts the sites with memory in use that the base does not
	// have.
	NewSites int `json:"new_site_count"`
	// Requests is Options.Requests; PerRequestBytes is GrowthBytes divided
	// by it (0 when Requests is 0).
	Requests        int64   `json:"request_count"`
	PerRequestBytes float64 `json:"per_request_bytes"`
}

// AllocSite is one allocation site, where memory was asked for, and the
// bytes and objects allocated there that are still in use.
type AllocSite struct {
	binsym.Position
	// Stack is the whole stack, leaf first, with Options.FullStack.
	Stack          []binsym.Position `json:"stack,omitempty"`
	InuseBytes     int64             `json:"inuse_bytes"`
	InuseObjects   int64             `json:"inuse_objects"`
	RequestBytes   int64             `json:"request_bytes"`
	RequestObjects int64             `json:"request_objects"`
	// Request says some of the site's memory was allocated on a request
	// path.
	Request bool `json:"request"`
	// Growth is nil without a base profile.
	Growth *SiteGrowth `json:"growth,omitempty"`
}

// SiteGrowth compares one allocation site with the base.
type SiteGrowth struct {
	BaseBytes   int64 `json:"base_bytes"`
	BaseObjects int64 `json:"base_objects"`
	// Bytes and Objects are the site's in-use values minus the base's.
	Bytes   int64 `json:"growth_bytes"`
	Objects int64 `json:"growth_objects"`
	// New says the base has nothing in use at this site.
	New bool `json:"new"`
	// PerRequestBytes is Bytes divided by Options.Requests.
	PerRequestBytes float64 `json:"per_request_bytes"`
}

// siteVals accumulates one site's values in one set of profiles.
type siteVals struct {
	bytes, objects, reqBytes, reqObjects int64
}

// heapAgg adds up the samples of heap profiles by site.
type heapAgg struct {
	t *frameTable
	// With FullStack, sites are stacks: stackIDs maps a stack's key to its
	// site index, and stacks holds the frames and the site frame of each.
	stackIDs map[string]int32
	stacks   []fullStack
	// total adds up the bytes and objects added, to refuse sums that
	// would overflow (each profile's are at most MaxTotal).
	total [2]int64
}

type fullStack struct {
	frames []binsym.Position
	site   int32
}

// add adds up the in-use values of p into vals, indexed by site, and
// returns the grown slice.
func (a *heapAgg) add(p *Profile, vals []siteVals) ([]siteVals, error) {
	prof := p.Prof
	idx := inuseIndices(prof)
	spaceIdx, objIdx := idx[0], idx[1]
	if spaceIdx < 0 || objIdx < 0 {
		return vals, sourceErrorf(p.Source, "not a heap profile: no inuse_space and inuse_objects sample types")
	}
	lt := newLocTable(a.t, prof)
	for _, s := range prof.Sample {
		space, objects := s.Value[spaceIdx], s.Value[objIdx]
		if space == 0 && objects == 0 {
			continue
		}
		if space < 0 || objects < 0 {
			return vals, sourceErrorf(p.Source, "negative in-use values (%d bytes, %d objects): a profile of what is in use never has them", space, objects)
		}
		a.total[0] += space
		a.total[1] += objects
		if a.total[0] > maxSum || a.total[1] > maxSum {
			return vals, sourceErrorf(p.Source, "the in-use values of the profiles add up to more than %d", int64(maxSum))
		}
		site, flags := lt.stackInfo(s.Location)
		if !a.t.keep(flags) {
			continue
		}
		if a.stackIDs != nil {
			site = a.stackSite(s.Location, site)
		} else if site < 0 {
			site = a.t.intern(binsym.Position{Function: "(no stack)"})
		}
		for int(site) >= len(vals) {
			vals = append(vals, siteVals{})
		}
		v := &vals[site]
		v.bytes += space
		v.objects += objects
		if flags&flagRequest != 0 {
			v.reqBytes += space
			v.reqObjects += objects
		}
	}
	return vals, nil
}

// stackSite returns the site index of a whole stack.
func (a *heapAgg) stackSite(locs []*profile.Location, site int32) int32 {
	frames, key := a.t.stack(locs)
	if id, ok := a.stackIDs[key]; ok {
		return id
	}
	if site < 0 {
		site = a.t.intern(binsym.Position{Function: "(no stack)"})
	}
	id := int32(len(a.stacks))
	a.stackIDs[key] = id
	a.stacks = append(a.stacks, fullStack{frames: frames, site: site})
	return id
}

// AnalyzeHeap adds up the in-use memory of heap profiles by allocation
// site and, when base is not empty, compares it with the base profiles.
// Several profiles (or base profiles) are added together, as "go tool
// pprof" does with several files.
func AnalyzeHeap(profiles, base []*Profile, opt Options) (*HeapReport, error) {
	if len(profiles) == 0 {
		return nil, fmt.Errorf("no heap profile to analyze")
	}
	a := &heapAgg{t: newFrameTable(opt)}
	if opt.FullStack {
		a.stackIDs = make(map[string]int32)
	}
	var cur, old []siteVals
	var err error
	for _, p := range profiles {
		if cur, err = a.add(p, cur); err != nil {
			return nil, err
		}
	}
	for _, p := range base {
		if old, err = a.add(p, old); err != nil {
			return nil, err
		}
	}
	n := max(len(cur), len(old))
	cur = append(cur, make([]siteVals, n-len(cur))...)
	old = append(old, make([]siteVals, n-len(old))...)

	r := &HeapReport{}
	var baseTotal siteVals
	if len(base) > 0 {
		r.Base = &HeapGrowth{Requests: max(opt.Requests, 0)}
	}
	for i := range n {
		c, o := cur[i], old[i]
		r.InuseBytes += c.bytes
		r.InuseObjects += c.objects
		r.RequestBytes += c.reqBytes
		r.RequestObjects += c.reqObjects
		baseTotal.bytes += o.bytes
		baseTotal.objects += o.objects
		if c == (siteVals{}) && (r.Base == nil || o == (siteVals{})) {
			continue
		}
		s := AllocSite{
			InuseBytes:     c.bytes,
			InuseObjects:   c.objects,
			RequestBytes:   c.reqBytes,
			RequestObjects: c.reqObjects,
			Request:        c.reqBytes != 0 || c.reqObjects != 0,
		}
		if a.stackIDs != nil {
			s.Position = a.t.frames[a.stacks[i].site]
			s.Stack = a.stacks[i].frames
		} else {
			s.Position = a.t.frames[i]
		}
		if r.Base != nil {
			g := &SiteGrowth{
				BaseBytes:   o.bytes,
				BaseObjects: o.objects,
				Bytes:       c.bytes - o.bytes,
				Objects:     c.objects - o.objects,
				New:         o.bytes == 0 && o.objects == 0,
			}
			if r.Base.Requests > 0 {
				g.PerRequestBytes = float64(g.Bytes) / float64(r.Base.Requests)
			}
			if g.New {
				r.Base.NewSites++
			}
			s.Growth = g
		}
		r.Sites = append(r.Sites, s)
	}
	if r.Base != nil {
		r.Base.InuseBytes = baseTotal.bytes
		r.Base.InuseObjects = baseTotal.objects
		r.Base.GrowthBytes = r.InuseBytes - baseTotal.bytes
		r.Base.GrowthObjects = r.InuseObjects - baseTotal.objects
		if r.Base.Requests > 0 {
			r.Base.PerRequestBytes = float64(r.Base.GrowthBytes) / float64(r.Base.Requests)
		}
	}
	slices.SortFunc(r.Sites, func(x, y AllocSite) int {
		if r.Base != nil {
			if c := cmp.Compare(y.Growth.Bytes, x.Growth.Bytes); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(y.InuseBytes, x.InuseBytes); c != 0 {
			return c
		}
		if c := cmp.Compare(y.InuseObjects, x.InuseObjects); c != 0 {
			return c
		}
		return compareSites(x, y)
	})
	return r, nil
}

// compareSites orders sites by their frames, for a stable order of ties.
func compareSites(x, y AllocSite) int {
	if c := compareFrames(x.Position, y.Position); c != 0 {
		return c
	}
	return slices.CompareFunc(x.Stack, y.Stack, compareFrames)
}

func compareFrames(x, y binsym.Position) int {
	return cmp.Or(cmp.Compare(x.Function, y.Function), cmp.Compare(x.File, y.File), cmp.Compare(x.Line, y.Line))
}
