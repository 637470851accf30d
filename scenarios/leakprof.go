package scenarios

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/english"
)

// Values of PhaseResult.LeakProfile: whether Go 1.27's goroutineleak
// profile was taken at a phase boundary.
const (
	// LeakTaken: the profile was taken, after the phase's heap dump.
	LeakTaken = "taken"
	// LeakUnavailable: the Go that ran the child has no goroutineleak
	// profile (before 1.27).
	LeakUnavailable = "n/a (Go 1.27+)"
	// LeakSkipped: a later phase writes a heap dump, and once the profile
	// has marked a goroutine leaked no dump of the process can be written
	// (see internal/selfdump), so it is taken only from the last phase
	// that dumps on.
	LeakSkipped = "not taken"
)

// LeakProfileLimit says what the goroutineleak profile cannot see, for
// the output of "ctxleak run" and its --list.
const LeakProfileLimit = "the goroutineleak profile (Go 1.27+) proves leaked only goroutines blocked on a channel, " +
	"lock or wait group that no runnable goroutine and no global can reach: one blocked on a channel a global holds " +
	"(global-cache's janitor) is never reported, even when nothing will ever send on it"

// LeakedGroup is a group of goroutines the goroutineleak profile proved
// leaked at a phase, by the function they are blocked in.
type LeakedGroup struct {
	// Count is how many goroutines the group stands for.
	Count int `json:"goroutine_count"`
	// BlockedIn is the first function of their stack outside the
	// runtime and the sync package: where the code blocked.
	BlockedIn binsym.Position `json:"blocked_in"`
}

// LeakProfileAvailable reports whether this Go has the goroutineleak
// profile (Go 1.27 and later), which the children of a Runner made of
// this executable take.
func LeakProfileAvailable() bool { return pprof.Lookup("goroutineleak") != nil }

// dumpLater reports whether a phase after phase i will write a heap dump:
// dumps are on and the catalogue expects a payload alive there.
func (e *Env) dumpLater(i int) bool {
	if e.opts.DumpDir == "" {
		return false
	}
	return slices.ContainsFunc(e.scenario.Phases[i+1:], func(p Phase) bool { return p.Alive })
}

// leakProfile takes the goroutineleak profile at phase i, after its heap
// dump, unless a later phase writes one (see LeakSkipped), keeps it as
// KeepDir/file.goroutineleak.pb.gz when profiles are kept, and fills in
// p's leak fields.
func (e *Env) leakProfile(i int, file string, p *PhaseResult) error {
	prof := pprof.Lookup("goroutineleak")
	switch {
	case prof == nil:
		p.LeakProfile = LeakUnavailable
		return nil
	case e.dumpLater(i):
		p.LeakProfile = LeakSkipped
		return nil
	}
	var buf bytes.Buffer
	if err := prof.WriteTo(&buf, 0); err != nil {
		return fmt.Errorf("goroutineleak profile: %w", err)
	}
	if e.opts.KeepDir != "" {
		path := filepath.Join(e.opts.KeepDir, file+".goroutineleak.pb.gz")
		if err := writeNew(path, buf.Bytes()); err != nil {
			return err
		}
		p.LeakProfileFile = path
	}
	groups, err := leakedGroups(buf.Bytes())
	if err != nil {
		return err
	}
	p.LeakProfile = LeakTaken
	p.LeakedGoroutines = groups
	p.Leaked = leakedText(groups)
	return nil
}

// leakedGroups reads a goroutineleak profile and groups its goroutines by
// the function they are blocked in, the largest group first.
func leakedGroups(data []byte) ([]LeakedGroup, error) {
	prof, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("reading the goroutineleak profile: %w", err)
	}
	byPos := map[binsym.Position]int{}
	for _, s := range prof.Sample {
		if len(s.Value) == 0 {
			continue
		}
		byPos[blockedIn(s.Location)] += int(s.Value[0])
	}
	groups := make([]LeakedGroup, 0, len(byPos))
	for pos, n := range byPos {
		groups = append(groups, LeakedGroup{Count: n, BlockedIn: pos})
	}
	slices.SortFunc(groups, func(a, b LeakedGroup) int {
		return cmp.Or(b.Count-a.Count, strings.Compare(a.BlockedIn.Function, b.BlockedIn.Function),
			cmp.Compare(a.BlockedIn.Line, b.BlockedIn.Line))
	})
	return groups, nil
}

// blockedIn returns the first frame of a stack, leaf first, whose function
// is not the runtime's or the sync package's: the code that blocked.
func blockedIn(locs []*profile.Location) binsym.Position {
	var last binsym.Position
	for _, loc := range locs {
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			last = binsym.Position{Function: ln.Function.Name, File: ln.Function.Filename, Line: int(ln.Line)}
			if !waitFunc(ln.Function.Name) {
				return last
			}
		}
	}
	return last
}

// waitFunc reports whether fn is a function of the runtime or of package
// sync, which a blocked goroutine waits in on behalf of its caller.
func waitFunc(fn string) bool {
	for _, pkg := range []string{"runtime.", "internal/", "sync."} {
		if strings.HasPrefix(fn, pkg) {
			return true
		}
	}
	return false
}

// leakedText says what the profile reported in a few words: "none", or
// "1 goroutine proven leaked in scenarios.sender
// (scenarios/catalogue.go:640)", one such part per group.
func leakedText(groups []LeakedGroup) string {
	if len(groups) == 0 {
		return "none"
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = english.Plural(g.Count, "goroutine") + " proven leaked in " + shortPosition(&g.BlockedIn)
	}
	return strings.Join(parts, "; ")
}
