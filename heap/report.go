package heap

import (
	"regexp"
	"slices"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// Report is the holder report of a heap dump. Its JSON document is
// described key by key in docs/json.md.
type Report struct {
	Dump      string `json:"dump"`
	Binary    string `json:"binary,omitempty"`
	GoVersion string `json:"go_version"`
	// Live is what the roots reach; Dead is the rest of the dump: garbage
	// not yet swept and the unused tails of spans.
	LiveBytes   uint64 `json:"live_bytes"`
	LiveObjects uint64 `json:"live_objects"`
	DeadBytes   uint64 `json:"dead_bytes"`
	DeadObjects uint64 `json:"dead_objects"`
	Goroutines  int    `json:"goroutine_count"`
	// SharedBytes is what no single root holds: objects several roots
	// reach (through context trees, channel queues and the like).
	SharedBytes   uint64 `json:"shared_bytes"`
	SharedObjects uint64 `json:"shared_objects"`
	MinSize       uint64 `json:"min_size_bytes"`
	// Unknown says what the report cannot tell for want of inputs.
	Unknown []Unknown `json:"unknown"`
	// Groups are the entries, most retained bytes first; GroupsTotal
	// counts them before Top and Focus.
	Groups      []*Group `json:"groups"`
	GroupsTotal int      `json:"group_count"`
	// OverlapBytes is what the groups count more than once: their retained
	// bytes added up, less what they retain together. A group's members
	// can be inside the members of another (large objects inside a large
	// object, or a holding, that has an entry of its own): Overlaps says
	// how much of which group is inside which, one entry per pair.
	OverlapBytes uint64    `json:"overlap_bytes"`
	Overlaps     []Overlap `json:"overlaps"`
	// Leaks says how the goroutines a goroutineleak profile proved leaked
	// matched the dump (LeakedGoroutines); nil without a profile. The
	// groups they hold (Group.Leaked) come first.
	Leaks *LeakMatch `json:"leaks,omitempty"`

	// members are the members each group counts, by group, when the
	// analysis records them (recordMembers).
	members [][]heapdump.NodeID
}

// Holders builds the holder report, with the options given to Analyze and
// then opts (MinSize, Top, Focus, MaxPathSteps). It groups first and
// thresholds second: its entries are groups of
//   - live objects of at least MinSize bytes (payloads), held the same way;
//   - holdings held the same way: objects a root holds directly (its
//     immediate dominator is a root node, a goroutine's runtime.g, or
//     several roots share it), counted for what they retain beyond the
//     large objects inside them: a context each of 10,000 goroutines
//     holds, a map or a list of many small objects;
//
// and it keeps the groups that add up to MinSize bytes or more, largest
// retained first. "Held the same way" is: by holders of the same
// signature (the same root kind and function and creation site, or the
// same global; the same set of roots for a shared object), in the same
// slot. Only the groups reported are described, each from its first
// member.
func (a *Analysis) Holders(opts ...Option) (*Report, error) {
	opt := a.opts
	opt.apply(opts)
	a.maxSteps = opt.maxSteps
	rep := &Report{
		Dump:        textsafe.Escape(a.g.Name()),
		GoVersion:   textsafe.Escape(a.d.Params.GoVersion),
		LiveBytes:   a.stats.LiveBytes,
		LiveObjects: a.stats.LiveObjects,
		DeadBytes:   a.stats.DeadBytes,
		DeadObjects: a.stats.DeadObjects,
		Goroutines:  len(a.d.Goroutines),
		MinSize:     opt.minSize,
		Unknown:     a.Unknown,
	}
	if a.Binary != nil {
		rep.Binary = textsafe.Escape(a.Binary.Path())
	}
	a.leaked = nil
	if opt.leaks != nil {
		a.leaked, rep.Leaks = a.matchLeaks(opt.leaks)
	}
	pend, nest, err := a.groupHoldings(opt, a.describeKeys)
	if err != nil {
		return nil, err
	}
	if a.leaked != nil {
		markLeaked(pend, a.leaked)
	}
	rep.SharedBytes, rep.SharedObjects = a.shared[0], a.shared[1] // what no single root holds, added up by the scan
	rep.GroupsTotal = len(pend)
	number := map[*pending]int{} // the number of each group reported, from 1
	// Describe the groups in order, a batch at a time, until Top of them
	// match Focus.
	for i := 0; i < len(pend) && (opt.top <= 0 || len(rep.Groups) < opt.top); {
		n := len(pend) - i
		if opt.top > 0 {
			n = min(n, opt.top-len(rep.Groups))
		}
		hs, err := a.describePending(pend[i : i+n])
		if err != nil {
			return nil, err
		}
		for j, h := range hs {
			if opt.focus == nil || h.matches(opt.focus) {
				rep.Groups = append(rep.Groups, h.Group)
				number[pend[i+j]] = len(rep.Groups)
				if a.recordMembers {
					rep.members = append(rep.members, pend[i+j].members)
				}
			}
		}
		i += n
	}
	if rep.Leaks != nil {
		countLeaks(rep.Leaks, pend, number, a.leaked)
	}
	rep.Overlaps = nest.overlaps(a, number)
	for _, o := range rep.Overlaps {
		rep.OverlapBytes += o.Bytes
	}
	return rep, nil
}

// Together reports whether some group retains less than MinSize: one of
// the groups of a global none of which passes MinSize alone, kept because
// together they do.
func (r *Report) Together() bool {
	return slices.ContainsFunc(r.Groups, func(g *Group) bool { return g.RetainedBytes < r.MinSize })
}

// describePending describes groups: the path, holder and type of the first
// member of each (of all at once: one search per root), with what all
// members add up to.
func (a *Analysis) describePending(ps []*pending) ([]*held, error) {
	a.nearestMembers(ps)
	var reps []heapdump.NodeID
	for _, p := range ps {
		if p.described == nil {
			reps = append(reps, p.rep)
		}
	}
	hs, err := a.describe(reps)
	if err != nil {
		return nil, err
	}
	out := make([]*held, len(ps))
	for i, p := range ps {
		h := p.described
		if h == nil {
			h, hs = hs[0], hs[1:]
		}
		h.Count, h.NestedCount = p.count, p.nested
		h.Holding = !p.large
		h.RetainedBytes, h.Objects = p.retained, p.objects
		h.EachMinBytes, h.EachMaxBytes = p.minEach, p.maxEach
		h.Mechanism = p.mech
		h.Leaked = p.leak
		if len(p.goroutines) > 0 || h.GoroutineCount > 0 {
			ids := p.goroutines
			if len(ids) == 0 {
				ids = h.Goroutines
			}
			h.GoroutineCount = len(ids)
			h.Goroutines = slices.Clip(ids[:min(len(ids), MaxGoroutineIDs)])
		}
		if h.end.node != heapdump.NoNode && a.reachable(h.end.node) {
			parts, inside, counted, err := a.madeOf(h.end.node, h.end)
			if err != nil {
				return nil, err
			}
			h.MadeOf, h.Inside, h.MadeOfObjects = parts, inside, counted
		}
		out[i] = h
	}
	return out, nil
}

// matches reports whether re matches the group's holder, a type or field
// on its path, or its allocation stack.
func (g *Group) matches(re *regexp.Regexp) bool {
	r := g.Root
	for _, s := range []string{r.Kind.String(), r.Function, r.Global, r.Callee, r.Detail} {
		if s != "" && re.MatchString(s) {
			return true
		}
	}
	for _, s := range []*binsym.Position{r.Location, r.CreatedBy, r.Creator} {
		if s != nil && re.MatchString(s.String()) {
			return true
		}
	}
	for _, s := range g.Path {
		if re.MatchString(s.Type) || re.MatchString(s.Via) {
			return true
		}
	}
	for _, s := range g.Object.AllocStack {
		if re.MatchString(s.String()) {
			return true
		}
	}
	return false
}
