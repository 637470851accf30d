package heap

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// DefaultMinSize is the size from which Holders reports an object.
const DefaultMinSize = 1 << 20

// HolderOptions choose what Holders reports.
type HolderOptions struct {
	// MinSize is the smallest object, or the smallest amount a root's
	// direct holding retains, that gets an entry. Zero means
	// DefaultMinSize.
	MinSize uint64
	// Top keeps the first Top groups; zero keeps them all.
	Top int
	// Focus, if set, keeps the groups whose holder, path or allocation
	// site it matches.
	Focus *regexp.Regexp
}

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

// Holders builds the holder report. Its entries are
//   - every live object of at least MinSize bytes (a payload), held by the
//     root that dominates it;
//   - every object a root holds directly (its immediate dominator is a
//     root, or several roots share it) that retains at least MinSize bytes
//     beyond the large objects already reported inside it: a map or list of
//     many small objects.
//
// Entries held the same way (same holder function or global, same types
// along the path) are grouped, largest retained first.
func (a *Analysis) Holders(opt HolderOptions) (*Report, error) {
	if opt.MinSize == 0 {
		opt.MinSize = DefaultMinSize
	}
	rep := &Report{
		Dump:        a.path,
		GoVersion:   a.Params.GoVersion,
		LiveBytes:   a.Stats.LiveBytes,
		LiveObjects: a.Stats.LiveObjects,
		DeadBytes:   a.Stats.DeadBytes,
		DeadObjects: a.Stats.DeadObjects,
		Goroutines:  len(a.Goroutines),
		MinSize:     opt.MinSize,
		Unknown:     a.Unknown,
	}
	if a.Binary != nil {
		rep.Binary = a.Binary.Path()
	}

	// Large objects, and what each top-level holding owes to them.
	var objs []uint32
	inLarge := map[uint32]uint64{}
	for v := range a.objectsOfSize(opt.MinSize) {
		if !a.tree.Reachable(v) {
			continue
		}
		objs = append(objs, v)
		// Only the outermost large objects of a holding count against
		// it: the retained size of an outer one includes the inner ones.
		top, nested := v, false
		for u := range a.tree.Chain(v) {
			if !a.isObject(u) {
				break
			}
			nested = nested || (u != v && a.NodeSize(u) >= opt.MinSize)
			top = u
		}
		if !nested {
			inLarge[top] += a.retained[v]
		}
	}
	// Top-level holdings that retain much beyond those. A holding that
	// retains less than MinSize in all has nothing beyond them either: the
	// first test spares most objects the map lookup.
	for v := uint32(0); int(v) < a.NumObjects; v++ {
		d := a.tree.Idom(v)
		if d == noNode || a.isObject(d) {
			continue
		}
		if d == a.SuperRoot {
			rep.SharedBytes += a.retained[v]
			rep.SharedObjects += uint64(a.objects[v])
		}
		if r := a.retained[v]; r >= opt.MinSize && r-min(r, inLarge[v]) >= opt.MinSize && a.NodeSize(v) < opt.MinSize {
			objs = append(objs, v)
		}
	}
	groups, err := a.describe(objs, true)
	if err != nil {
		return nil, err
	}
	rep.Groups = mergeGroups(groups)
	rep.GroupsTotal = len(rep.Groups)
	if opt.Focus != nil {
		rep.Groups = slices.DeleteFunc(rep.Groups, func(g *Group) bool { return !g.matches(opt.Focus) })
	}
	if opt.Top > 0 && len(rep.Groups) > opt.Top {
		rep.Groups = rep.Groups[:opt.Top]
	}
	// Neither the order nor Focus depend on the other roots of a shared
	// group: list them for the groups kept only.
	for _, g := range rep.Groups {
		if g.rootsPending {
			a.otherRoots(g, false)
		}
	}
	return rep, nil
}

// noNode is the dominator of an unreachable node.
const noNode = ^uint32(0)

// mergeGroups merges groups with the same key, adding up their counts and
// sizes, and orders them by retained bytes, then count, then key.
func mergeGroups(groups []*Group) []*Group {
	byKey := map[string]*Group{}
	var out []*Group
	for _, g := range groups {
		if m, ok := byKey[g.key]; ok {
			m.Count += g.Count
			m.RetainedBytes += g.RetainedBytes
			m.Objects += g.Objects
			continue
		}
		byKey[g.key] = g
		out = append(out, g)
	}
	slices.SortStableFunc(out, func(x, y *Group) int {
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
	for _, s := range []string{r.Kind, r.Function, r.Global, r.Callee, r.Detail} {
		if s != "" && re.MatchString(s) {
			return true
		}
	}
	for _, s := range []*Site{r.Location, r.CreatedBy, r.Creator} {
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
