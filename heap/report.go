package heap

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heapdump"
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
}

// Holders builds the holder report, with the options given to Analyze and
// then opts (MinSize, Top, Focus). Its entries are
//   - every live object of at least MinSize bytes (a payload), held by the
//     root that dominates it;
//   - every object a root holds directly (its immediate dominator is a
//     root, or several roots share it) that retains at least MinSize bytes
//     beyond the large objects already reported inside it: a map or list of
//     many small objects.
//
// Entries held the same way (same holder function or global, same types
// along the path) are grouped, largest retained first.
func (a *Analysis) Holders(opts ...Option) (*Report, error) {
	opt := a.opts
	opt.apply(opts)
	rep := &Report{
		Dump:        a.g.Name(),
		GoVersion:   a.d.Params.GoVersion,
		LiveBytes:   a.stats.LiveBytes,
		LiveObjects: a.stats.LiveObjects,
		DeadBytes:   a.stats.DeadBytes,
		DeadObjects: a.stats.DeadObjects,
		Goroutines:  len(a.d.Goroutines),
		MinSize:     opt.minSize,
		Unknown:     a.Unknown,
	}
	if a.Binary != nil {
		rep.Binary = a.Binary.Path()
	}

	// Large objects, and what each top-level holding owes to them.
	var objs []heapdump.NodeID
	inLarge := map[heapdump.NodeID]uint64{}
	for v := range a.g.ObjectsOfSize(opt.minSize) {
		if !a.reachable(v) {
			continue
		}
		objs = append(objs, v)
		// Only the outermost large objects of a holding count against
		// it: the retained size of an outer one includes the inner ones.
		top, nested := v, false
		for w := range a.tree.Chain(uint32(v)) {
			u := heapdump.NodeID(w)
			if !a.g.IsObject(u) {
				break
			}
			nested = nested || (u != v && a.g.Size(u) >= opt.minSize)
			top = u
		}
		if !nested {
			inLarge[top] += a.retained[v]
		}
	}
	// Top-level holdings that retain much beyond those. A holding that
	// retains less than MinSize in all has nothing beyond them either: the
	// first test spares most objects the map lookup.
	for v := heapdump.NodeID(0); int(v) < a.g.NumObjects(); v++ {
		d := a.Idom(v)
		if d == heapdump.NoNode || a.g.IsObject(d) {
			continue
		}
		if d == a.g.SuperRoot() {
			rep.SharedBytes += a.retained[v]
			rep.SharedObjects += uint64(a.objects[v])
		}
		if r := a.retained[v]; r >= opt.minSize && r-min(r, inLarge[v]) >= opt.minSize && a.g.Size(v) < opt.minSize {
			objs = append(objs, v)
		}
	}
	groups, err := a.describe(objs, true)
	if err != nil {
		return nil, err
	}
	merged := mergeGroups(groups)
	rep.GroupsTotal = len(merged)
	if opt.focus != nil {
		merged = slices.DeleteFunc(merged, func(g *held) bool { return !g.matches(opt.focus) })
	}
	if opt.top > 0 && len(merged) > opt.top {
		merged = merged[:opt.top]
	}
	// Neither the order nor Focus depend on the other roots of a shared
	// group: list them for the groups kept only.
	rep.Groups = make([]*Group, len(merged))
	for i, g := range merged {
		if g.rootsPending {
			a.otherRoots(g, false)
		}
		rep.Groups[i] = g.Group
	}
	return rep, nil
}

// mergeGroups merges groups with the same key, adding up their counts and
// sizes, and orders them by retained bytes, then count, then key.
func mergeGroups(groups []*held) []*held {
	byKey := map[string]*held{}
	var out []*held
	for _, g := range groups {
		if m, ok := byKey[g.key]; ok {
			m.Count += g.Count
			m.RetainedBytes += g.RetainedBytes
			m.Objects += g.Objects
			for _, id := range g.Goroutines {
				if i, found := slices.BinarySearch(m.Goroutines, id); !found {
					m.Goroutines = slices.Insert(m.Goroutines, i, id)
				}
			}
			continue
		}
		byKey[g.key] = g
		out = append(out, g)
	}
	slices.SortStableFunc(out, func(x, y *held) int {
		return cmp.Or(
			cmp.Compare(y.RetainedBytes, x.RetainedBytes),
			cmp.Compare(y.Count, x.Count),
			strings.Compare(x.key, y.key))
	})
	return out
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
