package scenarios

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/textsafe"
)

// HolderDetail is one way the alive payloads of a phase are held: the roots
// that keep them alive and the typed path from the first of them.
type HolderDetail struct {
	// Holder names the roots in a few words, as PhaseResult.Holder does.
	Holder string `json:"holder"`
	// Payloads counts the payloads held this way.
	Payloads int `json:"payload_count"`
	// Shared is set when no single root holds a payload: every root of
	// Roots reaches it, and any one of them keeps it alive.
	Shared bool `json:"shared,omitempty"`
	// Roots are the roots, grouped by what they are (a frame of the same
	// function, a global...): first the one that dominates the payload,
	// or the nearest when none does, then the others that reach it. The
	// runtime's own globals, which reach much of the heap, are left out.
	Roots []HolderRoot `json:"roots"`
	// Path is the reference chain from the first root to the first
	// payload, one typed step per object, the payload last.
	Path []PathStep `json:"path"`
	// RetainedBytes is what the payloads retain.
	RetainedBytes uint64 `json:"retained_bytes"`
}

// HolderRoot is a root of the heap graph that keeps a payload alive, or
// several alike: frames of the same function in as many goroutines.
type HolderRoot struct {
	// Count is how many roots this entry stands for.
	Count int `json:"root_count"`
	// Kind is RootFrame, RootGoroutine, RootGlobal, RootTimer,
	// RootFinalizer or RootOther; JSON names them "frame", "goroutine"...
	Kind heapdump.RootKind `json:"kind"`
	// Goroutines are the ids of the goroutines of frame and goroutine
	// roots, one per root.
	Goroutines []uint64 `json:"goroutine_ids"`
	// Position is a frame's function, a timer's closure or a finalizer,
	// with its file and line when known.
	Position *binsym.Position `json:"position,omitempty"`
	// CreatedBy is where the goroutine of a frame or goroutine root was
	// created (its go statement).
	CreatedBy *binsym.Position `json:"created_by,omitempty"`
	// Global is a global's symbol, or its address when it has none.
	Global string `json:"global,omitempty"`
	// Creator is where a timer was created.
	Creator *binsym.Position `json:"creator,omitempty"`
	// Detail says more: "pprof labels" for a goroutine whose label set
	// holds the payload, a runtime root's description.
	Detail string `json:"detail,omitempty"`
}

// PathStep is one object on the path from a root to a payload.
type PathStep struct {
	// Via is how the previous step (or the root) points to it: a field
	// such as ".val", or "argument" / "local" for a frame's slot.
	Via string `json:"via,omitempty"`
	// Type is the object's Go type, "" when unknown.
	Type string `json:"type"`
	// SizeBytes is the object's size.
	SizeBytes uint64 `json:"size_bytes"`
}

// Explainer names what keeps each phase's alive payloads alive, from the
// heap dumps a child wrote (Options.DumpDir) and the executable it ran.
type Explainer struct {
	// Binary is the executable that ran the child and wrote the dumps.
	Binary *binsym.Binary
	// Keep leaves the dumps where they are. Otherwise each is removed once
	// explained, and its PhaseResult.Dump cleared.
	Keep bool
}

// Explain fills in Holder and HolderDetail, or HolderError, of every phase
// of r that has a heap dump.
func (x *Explainer) Explain(r *Result) {
	syms := make([]binsym.Symbol, len(r.Globals))
	for i, g := range r.Globals {
		syms[i] = binsym.Symbol{Name: g.Name, Addr: uint64(g.Addr), Size: g.SizeBytes, Type: uint64(g.TypeAddr)}
	}
	for i := range r.Phases {
		p := &r.Phases[i]
		if p.Dump == "" {
			continue
		}
		start := time.Now()
		details, err := x.explain(p.Dump, p.PayloadAddrs, syms)
		p.HolderMillis = time.Since(start).Milliseconds()
		if err != nil {
			p.HolderError = textsafe.Escape(err.Error())
		} else {
			p.HolderDetail = details
			p.Holder = holdersText(details)
		}
		if !x.Keep {
			if err := os.Remove(p.Dump); err == nil || errors.Is(err, fs.ErrNotExist) {
				p.Dump = ""
			}
		}
	}
}

// explain reads one dump and describes the holders of the payloads at addrs.
func (x *Explainer) explain(dump string, payloads []Addr, syms []binsym.Symbol) ([]HolderDetail, error) {
	if len(payloads) == 0 {
		return nil, fmt.Errorf("%s: the child recorded no payload address", dump)
	}
	a, err := heap.Analyze(dump, x.Binary, heap.Globals(syms...))
	if err != nil {
		return nil, err
	}
	defer a.Close()
	addrs := make([]uint64, len(payloads))
	for i, p := range payloads {
		addrs[i] = uint64(p)
	}
	groups, err := a.Explain(addrs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dump, err)
	}
	var out []HolderDetail
	index := map[string]int{}
	for i, g := range groups {
		if g == nil {
			return nil, fmt.Errorf("%s: no root reaches the payload at %#x", dump, addrs[i])
		}
		d := detail(g)
		key := d.key()
		if j, ok := index[key]; ok {
			out[j].merge(d)
			continue
		}
		index[key] = len(out)
		out = append(out, d)
	}
	for i := range out {
		out[i].Holder = out[i].text()
	}
	return out, nil
}

// detail describes how a payload, explained by g, is held: by g's holder
// and, when it is shared, by every other root the heap analysis found. The
// names come from the dump's binary, which may be hostile: they are taken
// escaped (Group.Escaped).
func detail(g *heap.Group) HolderDetail {
	g = g.Escaped()
	d := HolderDetail{Payloads: 1, Shared: g.Shared, RetainedBytes: g.RetainedBytes}
	for _, s := range g.Path {
		d.Path = append(d.Path, PathStep{Via: s.Via, Type: s.Type, SizeBytes: s.Size})
	}
	d.Roots = []HolderRoot{rootOf(g.Root)}
	for _, h := range g.OtherRoots {
		d.Roots = addRoot(d.Roots, rootOf(h))
	}
	return d
}

// rootOf converts a holder the heap analysis found for a payload, its
// names escaped (Group.Escaped).
func rootOf(h heap.Holder) HolderRoot {
	r := HolderRoot{Count: 1, Kind: h.Kind, Global: h.Global,
		CreatedBy: h.CreatedBy, Creator: h.Creator, Detail: h.Detail}
	switch h.Kind {
	case heapdump.RootFrame, heapdump.RootDefer: // a defer is its frame's
		r.Kind = heapdump.RootFrame
		r.Goroutines = []uint64{h.Goroutine}
		r.Detail = ""
	case heapdump.RootGoroutine:
		r.Goroutines = []uint64{h.Goroutine}
		switch h.Detail {
		case heap.DetailLabels:
			r.Detail = "pprof labels"
		case heap.DetailG:
			r.Detail = "runtime.g"
		default:
			r.Detail = "not started"
		}
	case heapdump.RootTimer:
		r.Detail = ""
	}
	if h.Function != "" {
		r.Position = &binsym.Position{Function: h.Function}
		if h.Location != nil && h.Location.File != "" {
			r.Position.File, r.Position.Line = h.Location.File, h.Location.Line
		}
	}
	return r
}

// addRoot adds r to roots, counting it with an entry of the same shape.
func addRoot(roots []HolderRoot, r HolderRoot) []HolderRoot {
	k := r.shape()
	for i := range roots {
		if roots[i].shape() == k {
			roots[i].Count += r.Count
			roots[i].Goroutines = append(roots[i].Goroutines, r.Goroutines...)
			return roots
		}
	}
	return append(roots, r)
}

// shape says what a root is, apart from which goroutine it belongs to.
func (r *HolderRoot) shape() string {
	site := func(s *binsym.Position) string {
		if s == nil {
			return ""
		}
		return s.String()
	}
	pos := ""
	if r.Position != nil {
		pos = r.Position.Function + " " + r.Position.File + ":" + strconv.Itoa(r.Position.Line)
	}
	return strings.Join([]string{r.Kind.String(), pos, r.Global, site(r.CreatedBy), site(r.Creator), r.Detail}, "|")
}

// key says how a payload is held: the shapes of its roots and the types
// along its path.
func (d *HolderDetail) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v", d.Shared)
	for _, r := range d.Roots {
		fmt.Fprintf(&b, "|%d:%s", r.Count, r.shape())
	}
	b.WriteString("|" + d.TypesText())
	return b.String()
}

// merge adds e, a payload held the same way, to d.
func (d *HolderDetail) merge(e HolderDetail) {
	d.Payloads += e.Payloads
	d.RetainedBytes += e.RetainedBytes
	for i := range d.Roots {
		d.Roots[i].Count += e.Roots[i].Count
		d.Roots[i].Goroutines = append(d.Roots[i].Goroutines, e.Roots[i].Goroutines...)
	}
}

// holdersText names the holders of a phase's payloads in a line.
func holdersText(details []HolderDetail) string {
	parts := make([]string, len(details))
	for i := range details {
		parts[i] = details[i].Holder
	}
	return strings.Join(parts, "; ")
}

// text names d's roots in a few words, e.g. "goroutine 18 frame
// scenarios.sender (scenarios/catalogue.go:456)", "10 x goroutine frame
// scenarios.task (scenarios/catalogue.go:288)", "global scenarios.cache",
// "timer context.WithDeadlineCause.func2, created at scenarios.timeoutJob
// (scenarios/catalogue.go:398)": positions as binsym.Position prints them,
// functions without their import path (ShortFunc). Globals without a name
// are left out, unless there is nothing else.
func (d *HolderDetail) text() string {
	var parts []string
	for i := range d.Roots {
		r := &d.Roots[i]
		if r.Kind == heapdump.RootGlobal && strings.HasPrefix(r.Global, "0x") && (i > 0 || len(d.Roots) > 1) {
			continue
		}
		parts = append(parts, r.text())
	}
	return strings.Join(parts, " + ")
}

// text names r in a few words.
func (r *HolderRoot) text() string {
	n := ""
	if r.Count > 1 {
		n = strconv.Itoa(r.Count) + " x "
	}
	g := "goroutine"
	if r.Count == 1 && len(r.Goroutines) == 1 {
		g = fmt.Sprintf("goroutine %d", r.Goroutines[0])
	}
	switch r.Kind {
	case heapdump.RootFrame:
		return n + g + " frame " + shortPosition(r.Position)
	case heapdump.RootGoroutine:
		return n + g + " (" + r.Detail + ")"
	case heapdump.RootGlobal:
		return n + "global " + ShortFunc(r.Global)
	case heapdump.RootTimer:
		s := n + "timer " + r.function()
		if r.Creator != nil {
			s += ", created at " + shortPosition(r.Creator)
		}
		return s
	case heapdump.RootFinalizer:
		return n + "finalizer " + r.function()
	}
	return n + "runtime root " + r.Detail
}

// function is the short name of r's function, "" when unknown.
func (r *HolderRoot) function() string {
	if r.Position == nil {
		return ""
	}
	return ShortFunc(r.Position.Function)
}

// shortPosition formats p as binsym.Position does, "function
// (dir/file.go:line)", with the function's import path left out, or ""
// for nil.
func shortPosition(p *binsym.Position) string {
	if p == nil {
		return ""
	}
	q := *p
	q.Function = ShortFunc(q.Function)
	return q.String()
}

// ShortFunc drops the import path from a function name, but for its last
// element: "github.com/ctxleak/ctxleak/scenarios.task" becomes
// "scenarios.task", "net/http.(*conn).serve" "http.(*conn).serve".
func ShortFunc(fn string) string {
	end := len(fn)
	if i := strings.IndexAny(fn, "[("); i >= 0 {
		end = i
	}
	if i := strings.LastIndex(fn[:end], "/"); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// PathText formats the types along d's path, e.g. "context.valueCtx >
// []uint8 of 2.0 MiB", with "?" for a run of objects of unknown type,
// closures named by their short function name and the payload's size
// last. A boxed slice (its 24-byte header, then its array) is one step.
func (d *HolderDetail) PathText() string {
	parts := d.pathTypes()
	if n := len(d.Path); n > 0 && d.Path[n-1].SizeBytes > 0 && len(parts) > 0 {
		parts[len(parts)-1] += " of " + bytesize.Format(int64(d.Path[n-1].SizeBytes))
	}
	return strings.Join(parts, " > ")
}

// TypesText is PathText without the payload's size: "context.valueCtx >
// []uint8". Scenario.Expect's path expressions match it.
func (d *HolderDetail) TypesText() string { return strings.Join(d.pathTypes(), " > ") }

// pathTypes returns the steps of PathText without the payload's size.
func (d *HolderDetail) pathTypes() []string {
	var parts []string
	prev := ""
	for _, s := range d.Path {
		t := s.Type
		switch {
		case t == "":
			t = "?"
			if prev == "?" {
				continue
			}
		case strings.HasPrefix(t, "closure "):
			t = "closure " + ShortFunc(strings.TrimPrefix(t, "closure "))
		case strings.HasPrefix(t, "[]") && t == prev:
			continue // the array of the boxed slice before
		}
		parts = append(parts, t)
		prev = t
	}
	return parts
}
