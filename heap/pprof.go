package heap

import (
	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/google/pprof/profile"
)

// Profile returns the report as a retention profile: one sample per group,
// whose stack is the holder path with the holder at the bottom and the
// object's type at the top, valued by the bytes and objects the group
// retains. Written with its Write method (gzipped profile.proto), "go tool
// pprof -http=: FILE" draws a flame graph of who holds memory. Its Comments
// are the caller's to fill: a command puts its command line there.
func (r *Report) Profile() *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "retained_space", Unit: "bytes"},
			{Type: "retained_objects", Unit: "count"},
		},
		DefaultSampleType: "retained_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            1,
	}
	locs := map[string]*profile.Location{}
	loc := func(name string, site *binsym.Position) *profile.Location {
		key := name
		if site != nil {
			key += "\x00" + site.File
		}
		if l, ok := locs[key]; ok {
			return l
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		line := profile.Line{Function: fn}
		if site != nil {
			fn.Filename = site.File
			line.Line = int64(site.Line)
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{line}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, l)
		locs[key] = l
		return l
	}
	for _, g := range r.Groups {
		// Leaf first: the object, the path back up, then the holder.
		var stack []*profile.Location
		for i := len(g.Path) - 1; i >= 0; i-- {
			s := g.Path[i]
			name := s.Type
			if name == "" {
				name = "?"
			}
			if s.Via != "" {
				name += " (" + s.Via + ")"
			}
			var site *binsym.Position
			if i == len(g.Path)-1 {
				site = g.Object.AllocSite
			}
			stack = append(stack, loc(name, site))
		}
		stack = append(stack, loc(rootName(g.Root), g.Root.Location))
		s := &profile.Sample{
			Location: stack,
			Value:    []int64{int64(g.RetainedBytes), int64(g.Objects)},
			Label:    map[string][]string{"holder": {g.Root.Kind.String()}},
		}
		if g.Root.Goroutine != 0 {
			s.NumLabel = map[string][]int64{"goroutine": {int64(g.Root.Goroutine)}}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// rootName names a holder for a profile frame: without a goroutine id, so
// that goroutines running the same function merge.
func rootName(h Holder) string {
	switch h.Kind {
	case heapdump.RootFrame:
		return "frame " + h.Function
	case heapdump.RootDefer:
		return "frame " + h.Function + " (a defer)"
	case heapdump.RootPanic:
		return "panic"
	case heapdump.RootGoroutine:
		if h.CreatedBy != nil {
			return "goroutine created by " + h.CreatedBy.Function
		}
		return "goroutine"
	}
	return h.Short()
}
