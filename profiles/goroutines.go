package profiles

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/ctxleak/ctxleak/binsym"
)

// GoroutineReport groups the goroutines of one or more goroutine profiles.
type GoroutineReport struct {
	// Total counts the goroutines kept by Focus and Ignore: with neither
	// set, the total "go tool pprof -top" shows.
	Total int64 `json:"goroutine_count"`
	// Captured counts the goroutines that carry a request label but are
	// not on a request path: captured request contexts.
	Captured int64 `json:"captured_count"`
	// InFlight counts the goroutines that carry a request label and are on
	// a request path: requests being served when the profile was taken.
	InFlight int64 `json:"in_flight_count"`
	// Groups are captured groups first, then in-flight ones, then the
	// rest, each by count, largest first.
	Groups []GoroutineGroup `json:"groups"`
	// Base is the growth against a base goroutine profile, set by the
	// caller from CompareGoroutines; nil without a base.
	Base *GoroutineGrowth `json:"base,omitempty"`
}

// GoroutineGroup is a set of goroutines that started in the same function,
// wait at the same place and carry the same label keys.
type GoroutineGroup struct {
	// Start is the bottom frame of the stacks: the function the goroutines
	// started in (proto goroutine profiles have no "created by" frame).
	Start binsym.Position `json:"start"`
	// Wait is the first frame outside the runtime and helpers from the top
	// of the stack: where the goroutines are blocked or running.
	Wait binsym.Position `json:"wait"`
	// Stack is the whole stack, leaf first, with Options.FullStack.
	Stack []binsym.Position `json:"stack,omitempty"`
	Count int64             `json:"goroutine_count"`
	// LabelKeys are the pprof label keys the goroutines carry, sorted.
	LabelKeys []string `json:"label_keys"`
	// Labels holds the distinct values of each key, sorted, only with
	// Options.LabelValues.
	Labels map[string][]string `json:"labels,omitempty"`
	// Captured says the goroutines carry a request label and are not on a
	// request path; InFlight says they carry one and are on a request path.
	Captured bool `json:"captured"`
	InFlight bool `json:"in_flight"`
	// BlockedOn is what the goroutines of a goroutineleak profile are
	// blocked on for ever, from the runtime frames of their stack: "chan
	// send", "sync.Mutex.Lock", ...; "" for goroutine profiles, or when
	// the stack does not say.
	BlockedOn string `json:"blocked_on,omitempty"`
}

type groupKey struct {
	start, wait int32
	stack       string
	labelKeys   string
	request     bool // on a request path
}

// AnalyzeGoroutines groups the goroutines of goroutine profiles, or of
// goroutineleak profiles (all of one kind), by start function, wait site
// and label keys (by whole stack and label keys with Options.FullStack),
// and finds those that carry request labels.
func AnalyzeGoroutines(profiles []*Profile, opt Options) (*GoroutineReport, error) {
	if len(profiles) == 0 {
		return nil, fmt.Errorf("no goroutine profile to analyze")
	}
	t := newFrameTable(opt)
	requestKeys := make(map[string]bool)
	for _, k := range opt.requestLabels() {
		requestKeys[k] = true
	}
	groups := make(map[groupKey]*GoroutineGroup)
	values := make(map[*GoroutineGroup]map[string]map[string]bool)
	r := &GoroutineReport{}
	for _, p := range profiles {
		if p.Kind != profiles[0].Kind || p.Kind != Goroutine && p.Kind != GoroutineLeak {
			return nil, sourceErrorf(p.Source, "not a %s profile", profiles[0].Kind)
		}
		lt := newLocTable(t, p.Prof)
		for _, s := range p.Prof.Sample {
			if len(s.Value) == 0 || s.Value[0] == 0 {
				continue
			}
			n := s.Value[0]
			if n < 0 || r.Total+n > maxSum {
				return nil, sourceErrorf(p.Source, "goroutine counts that are negative or add up to more than %d: no real profile has them", int64(maxSum))
			}
			wait, flags := lt.stackInfo(s.Location)
			if !t.keep(flags) {
				continue
			}
			key := groupKey{start: -1, wait: wait, request: flags&flagRequest != 0}
			key.start = t.startFrame(lt, s.Location)
			var frames []binsym.Position
			if opt.FullStack {
				frames, key.stack = t.stack(s.Location)
			}
			labelKeys := slices.Sorted(maps.Keys(s.Label))
			key.labelKeys = strings.Join(labelKeys, "\x00")
			g := groups[key]
			if g == nil {
				g = &GoroutineGroup{Stack: frames, LabelKeys: labelKeys}
				if g.LabelKeys == nil {
					g.LabelKeys = []string{}
				}
				g.Start = t.frameAt(key.start)
				g.Wait = t.frameAt(key.wait)
				if p.Kind == GoroutineLeak {
					g.BlockedOn = blockedOn(s.Location)
				}
				for _, k := range labelKeys {
					if requestKeys[k] {
						g.InFlight = key.request
						g.Captured = !g.InFlight
						break
					}
				}
				groups[key] = g
			}
			g.Count += n
			r.Total += n
			switch {
			case g.Captured:
				r.Captured += n
			case g.InFlight:
				r.InFlight += n
			}
			if opt.LabelValues && len(s.Label) > 0 {
				vs := values[g]
				if vs == nil {
					vs = make(map[string]map[string]bool)
					values[g] = vs
				}
				for k, v := range s.Label {
					if vs[k] == nil {
						vs[k] = make(map[string]bool)
					}
					for _, x := range v {
						vs[k][x] = true
					}
				}
			}
		}
	}
	for _, g := range groups {
		if vs := values[g]; vs != nil {
			g.Labels = make(map[string][]string, len(vs))
			for k, set := range vs {
				g.Labels[k] = slices.Sorted(maps.Keys(set))
			}
		}
		r.Groups = append(r.Groups, *g)
	}
	rank := func(g GoroutineGroup) int {
		switch {
		case g.Captured:
			return 0
		case g.InFlight:
			return 1
		}
		return 2
	}
	slices.SortFunc(r.Groups, func(x, y GoroutineGroup) int {
		return cmp.Or(
			cmp.Compare(rank(x), rank(y)),
			cmp.Compare(y.Count, x.Count),
			compareFrames(x.Start, y.Start),
			compareFrames(x.Wait, y.Wait),
			slices.Compare(x.LabelKeys, y.LabelKeys),
			slices.CompareFunc(x.Stack, y.Stack, compareFrames),
		)
	})
	return r, nil
}

// frameAt returns the frame with id, or an "(no stack)" frame for -1.
func (t *frameTable) frameAt(id int32) binsym.Position {
	if id < 0 {
		return binsym.Position{Function: "(no stack)"}
	}
	return t.frames[id]
}

// startFrame returns the function a goroutine started in: the outermost
// named frame of its stack other than runtime.goexit (legacy text keeps
// goexit's address, unnamed).
func (t *frameTable) startFrame(lt *locTable, locs []*profile.Location) int32 {
	for i := len(locs) - 1; i >= 0; i-- {
		loc := locs[i]
		for j := len(loc.Line) - 1; j >= 0; j-- {
			ln := loc.Line[j]
			if ln.Function == nil || ln.Function.Name == "" || ln.Function.Name == "runtime.goexit" {
				continue
			}
			f := t.frameOf(loc, ln)
			f.Line = 0
			return t.intern(f)
		}
	}
	if len(locs) > 0 {
		return lt.get(locs[len(locs)-1]).leaf
	}
	return -1
}
