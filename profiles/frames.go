package profiles

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/ctxleak/ctxleak/binsym"
)

// Location flags.
const (
	flagRequest uint8 = 1 << iota
	flagFocus
	flagIgnore
)

// locInfo is what the analysis needs from one location, computed once.
type locInfo struct {
	site int32 // the first non-helper, named frame, or -1
	// runtime is the first named frame that is not an allocation
	// primitive, or -1: the site of stacks that are all runtime.
	runtime int32
	leaf    int32 // the location's innermost frame, named or not
	flags   uint8
	done    bool
}

// isAllocPrimitive reports whether function is one of the runtime's
// allocation entry points. In a stack made only of runtime frames (the
// runtime allocating for itself, such as a new goroutine's g in
// runtime.malg), the first frame that is not one of these is the site.
func isAllocPrimitive(function string) bool {
	name, ok := strings.CutPrefix(function, "runtime.")
	if !ok {
		return strings.HasPrefix(function, "internal/runtime/")
	}
	for _, p := range []string{"malloc", "newobject", "newarray", "makeslice", "growslice", "makemap",
		"mapassign", "rawstring", "rawbyteslice", "rawruneslice", "concatstring", "slicebytetostring",
		"stringtoslice", "convT", "makechan"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// frameTable interns frames and classifies locations. One table serves
// several profiles: frames are keyed by name, file and line, never by the
// profiles' location IDs. A frame is a binsym.Position; its Line is 0 for
// sites grouped by function and for the function a goroutine started in,
// and a frame the profile does not name has Function "0x" and its address,
// and no file.
type frameTable struct {
	opt     Options
	by      Granularity
	helper  func(string) bool
	request *regexp.Regexp

	ids    map[binsym.Position]int32
	frames []binsym.Position
	// fnFlags caches the classification of function names.
	fnFlags map[*profile.Function]uint8
}

const (
	fnHelper    uint8 = 1 << 7
	fnPrimitive uint8 = 1 << 6
)

func newFrameTable(opt Options) *frameTable {
	return &frameTable{
		opt:     opt,
		by:      opt.by(),
		helper:  opt.helper(),
		request: opt.request(),
		ids:     make(map[binsym.Position]int32),
		fnFlags: make(map[*profile.Function]uint8),
	}
}

// intern returns the id of f.
func (t *frameTable) intern(f binsym.Position) int32 {
	if id, ok := t.ids[f]; ok {
		return id
	}
	id := int32(len(t.frames))
	t.ids[f] = id
	t.frames = append(t.frames, f)
	return id
}

// frameOf returns the frame of one line of a location.
func (t *frameTable) frameOf(loc *profile.Location, ln profile.Line) binsym.Position {
	if ln.Function == nil || ln.Function.Name == "" {
		return binsym.Position{Function: "0x" + strconv.FormatUint(loc.Address, 16)}
	}
	f := binsym.Position{Function: ln.Function.Name, File: ln.Function.Filename}
	if t.by == ByLine {
		f.Line = int(ln.Line)
	}
	return f
}

// funcFlags classifies a function once per profile.Function.
func (t *frameTable) funcFlags(fn *profile.Function) uint8 {
	if fl, ok := t.fnFlags[fn]; ok {
		return fl
	}
	var fl uint8
	if t.helper(fn.Name) {
		fl |= fnHelper
	}
	if isAllocPrimitive(fn.Name) {
		fl |= fnPrimitive
	}
	if t.request.MatchString(fn.Name) {
		fl |= flagRequest
	}
	if t.opt.Focus != nil && (t.opt.Focus.MatchString(fn.Name) || t.opt.Focus.MatchString(fn.Filename)) {
		fl |= flagFocus
	}
	if t.opt.Ignore != nil && (t.opt.Ignore.MatchString(fn.Name) || t.opt.Ignore.MatchString(fn.Filename)) {
		fl |= flagIgnore
	}
	t.fnFlags[fn] = fl
	return fl
}

// classify computes a location's info.
func (t *frameTable) classify(loc *profile.Location) locInfo {
	li := locInfo{site: -1, runtime: -1, done: true}
	if len(loc.Line) == 0 {
		li.leaf = t.intern(t.frameOf(loc, profile.Line{}))
		return li
	}
	for i, ln := range loc.Line {
		if ln.Function == nil || ln.Function.Name == "" {
			if i == 0 {
				li.leaf = t.intern(t.frameOf(loc, ln))
			}
			continue
		}
		fl := t.funcFlags(ln.Function)
		li.flags |= fl &^ (fnHelper | fnPrimitive)
		isSite := li.site < 0 && fl&fnHelper == 0
		isRuntime := li.runtime < 0 && fl&fnPrimitive == 0
		if i == 0 || isSite || isRuntime {
			id := t.intern(t.frameOf(loc, ln))
			if i == 0 {
				li.leaf = id
			}
			if isSite {
				li.site = id
			}
			if isRuntime {
				li.runtime = id
			}
		}
	}
	return li
}

// locTable maps one profile's locations to their info: a slice indexed by
// location ID when the IDs are dense (as Go writes them), a map otherwise.
type locTable struct {
	t     *frameTable
	dense []locInfo
	byPtr map[*profile.Location]*locInfo
}

func newLocTable(t *frameTable, p *profile.Profile) *locTable {
	lt := &locTable{t: t}
	var maxID uint64
	for _, l := range p.Location {
		maxID = max(maxID, l.ID)
	}
	if maxID <= uint64(4*len(p.Location)+1024) {
		lt.dense = make([]locInfo, maxID+1)
	} else {
		lt.byPtr = make(map[*profile.Location]*locInfo, len(p.Location))
	}
	return lt
}

func (lt *locTable) get(l *profile.Location) *locInfo {
	var li *locInfo
	if lt.dense != nil && l.ID < uint64(len(lt.dense)) {
		li = &lt.dense[l.ID]
	} else {
		if lt.byPtr == nil {
			lt.byPtr = make(map[*profile.Location]*locInfo)
		}
		li = lt.byPtr[l]
		if li == nil {
			li = new(locInfo)
			lt.byPtr[l] = li
		}
	}
	if !li.done {
		*li = lt.t.classify(l)
	}
	return li
}

// stackInfo walks a sample's stack once: its site (the first non-helper
// named frame; in a stack of helpers, the first frame that is not an
// allocation primitive; else the leaf frame; -1 for an empty stack) and
// the union of its locations' flags.
func (lt *locTable) stackInfo(locs []*profile.Location) (site int32, flags uint8) {
	site, fallback := int32(-1), int32(-1)
	for _, l := range locs {
		li := lt.get(l)
		if site < 0 && li.site >= 0 {
			site = li.site
		}
		if fallback < 0 && li.runtime >= 0 {
			fallback = li.runtime
		}
		flags |= li.flags
	}
	if site < 0 {
		site = fallback
	}
	if site < 0 && len(locs) > 0 {
		site = lt.get(locs[0]).leaf
	}
	return site, flags
}

// keep applies Focus and Ignore to a sample's flags.
func (t *frameTable) keep(flags uint8) bool {
	if flags&flagIgnore != 0 {
		return false
	}
	return t.opt.Focus == nil || flags&flagFocus != 0
}

// stack returns the frames of a stack, leaf first, and a key that
// identifies it.
func (t *frameTable) stack(locs []*profile.Location) ([]binsym.Position, string) {
	var frames []binsym.Position
	var key strings.Builder
	for _, l := range locs {
		if len(l.Line) == 0 {
			f := t.frameOf(l, profile.Line{})
			frames = append(frames, f)
			key.WriteString(f.Function + "\x00\x00\x00")
			continue
		}
		for _, ln := range l.Line {
			f := t.frameOf(l, ln)
			frames = append(frames, f)
			key.WriteString(f.Function)
			key.WriteByte(0)
			key.WriteString(f.File)
			key.WriteByte(0)
			key.WriteString(strconv.Itoa(f.Line))
			key.WriteByte(0)
		}
	}
	return frames, key.String()
}
