package heap

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/heap/internal/dom"
)

// Analysis is a heap dump read with the help of the executable that wrote
// it, with its dominator tree: how many bytes every object retains, and
// which root holds it. Build one with Analyze; ask it for the holder report
// (Holders) or for the holders of particular objects (Explain).
type Analysis struct {
	*Graph

	// Binary is the executable that wrote the dump, or nil.
	Binary *binsym.Binary
	// Unknown says what the report cannot tell for want of inputs (no
	// executable, no DWARF, a PIE...), one typed reason each.
	Unknown []Unknown

	tree     *dom.Tree
	retained []uint64 // bytes retained by each node
	objects  []uint32 // objects retained by each node, itself included

	gByAddr map[uint64]int // goroutine index by runtime.g address, built on demand
	parent  []uint32       // search tree of shortestPaths, reused
	preds   *dom.Graph     // the reverse graph, built on demand
	seen    []uint64       // bitmap of reachersOfObject, clear between calls
	gNodes  []uint64       // bitmap of the objects that are goroutines' runtime.g, built on demand
	// labelsOff is the offset of runtime.g's labels field, -1 when
	// unknown, 0 until looked up.
	labelsOff int64
	reach     *reachers // built on demand
	types     typer
}

// Analyze reads the heap dump at path and computes its dominator tree.
// Options add names the executable lacks (see Globals).
// bin is the executable that wrote the dump, or nil: with it, frames get
// source lines, outgoing arguments are attributed to the callee frame,
// globals and closures are named and objects are typed; without it the
// report says what is unknown. Analyze checks that bin wrote the dump (same
// Go version, functions at the addresses the dump's frames give) and sets
// its load bias for a PIE.
func Analyze(path string, bin *binsym.Binary, opts ...AnalyzeOption) (*Analysis, error) {
	g, err := Load(path, loadOptions(path, bin, opts))
	if err != nil {
		return nil, err
	}
	a, err := newAnalysis(g, bin)
	if err != nil {
		g.Close()
		return nil, err
	}
	return a, nil
}

// loadOptions are the reader's options for a dump at path written by bin.
func loadOptions(path string, bin *binsym.Binary, opts []AnalyzeOption) Options {
	var cfg analyzeConfig
	for _, o := range opts {
		o(&cfg)
	}
	slices.SortFunc(cfg.globals, func(x, y binsym.Symbol) int { return cmp.Compare(x.Addr, y.Addr) })
	// The dominator tree says what is live: Load need not search the
	// graph for it too.
	lo := Options{liveLater: true}
	if bin != nil {
		lo.Prepare = func(d *Dump) error { return matchBinary(path, d, bin) }
		lo.OutArgs = bin.ArgsSize
	}
	if bin != nil || len(cfg.globals) > 0 {
		lo.GlobalSymbol = func(addr uint64) (string, uint64, bool) {
			if bin != nil {
				if s, ok := bin.Global(addr); ok {
					return s.Name, s.Addr, true
				}
			}
			return cfg.global(addr)
		}
	}
	return lo
}

// newAnalysis computes the dominator tree of g and what follows from it.
func newAnalysis(g *Graph, bin *binsym.Binary) (*Analysis, error) {
	if bin != nil {
		// The report types the objects on its paths from the executable's
		// DWARF; decode it on the other core while the dominator tree,
		// which uses one, is computed.
		types := make(chan struct{})
		go func() {
			defer close(types)
			_ = bin.LoadTypes() // a type lookup says what failed
		}()
		defer func() { <-types }()
	}
	tree, err := dom.New(dom.Graph{Start: g.Start, Succ: g.Succ}, g.SuperRoot)
	if err != nil {
		return nil, fmt.Errorf("%s: dominators: %w", g.path, err)
	}
	g.setLive(tree)
	a := &Analysis{
		Graph:    g,
		Binary:   bin,
		tree:     tree,
		retained: dom.RetainedFill(tree, g.FillNodeSizes),
		objects:  tree.RetainedObjects(),
	}
	a.types = typer{a: a}
	if bin == nil {
		a.Unknown = []Unknown{noBinary}
	} else {
		a.Unknown = unknowns(bin.Missing())
	}
	return a, nil
}

// An AnalyzeOption adds to what Analyze knows beyond the dump and the
// executable.
type AnalyzeOption func(*analyzeConfig)

type analyzeConfig struct {
	globals []binsym.Symbol
}

// Globals names global variables that the executable's symbol table does
// not (it is stripped, as go run and go test build it): a program that
// dumps its own heap knows the addresses of its variables and can pass
// them, with their sizes.
func Globals(syms ...binsym.Symbol) AnalyzeOption {
	return func(c *analyzeConfig) { c.globals = append(c.globals, syms...) }
}

// global returns the symbol of cfg.globals (sorted) that holds addr.
func (c *analyzeConfig) global(addr uint64) (string, uint64, bool) {
	i, _ := slices.BinarySearchFunc(c.globals, addr, func(s binsym.Symbol, a uint64) int { return cmp.Compare(s.Addr, a) })
	for _, j := range []int{i, i - 1} {
		if j >= 0 && j < len(c.globals) {
			s := c.globals[j]
			if addr >= s.Addr && addr < s.Addr+max(s.Size, 1) {
				return s.Name, s.Addr, true
			}
		}
	}
	return "", 0, false
}

// matchBinary checks that bin is the executable that wrote the dump d, and
// sets its load bias when it is a PIE.
func matchBinary(path string, d *Dump, bin *binsym.Binary) error {
	if dv, bv := d.Params.GoVersion, bin.GoVersion(); dv != "" && bv != "" && dv != bv {
		return fmt.Errorf("%s was written by %s but %s was built with %s: not the executable that wrote the dump",
			path, dv, bin.Path(), bv)
	}
	var lastErr error
	for _, f := range d.Frames {
		if f.Func == "" || f.Func == "unknown function" || f.Entry == 0 {
			continue
		}
		bias, err := bin.BiasFor(f.Func, f.Entry)
		if err != nil {
			lastErr = err
			continue
		}
		if bin.PIE() {
			bin.SetBias(bias)
		} else if bias != 0 {
			return fmt.Errorf("%s: function %s is at %#x in the dump but not in %s: not the executable that wrote the dump",
				path, f.Func, f.Entry, bin.Path())
		}
		return nil
	}
	if lastErr != nil {
		return fmt.Errorf("%s: no function of the dump's stacks matches %s (%v): not the executable that wrote the dump",
			path, bin.Path(), lastErr)
	}
	return nil
}

// Close releases the dump file. The Binary is the caller's to close.
func (a *Analysis) Close() error { return a.Graph.Close() }

// Retained returns the bytes node v retains: its own size and that of every
// object it dominates. It is 0 for objects no root reaches.
func (a *Analysis) Retained(v uint32) uint64 { return a.retained[v] }

// RetainedObjects returns the number of objects node v retains, itself
// included when it is an object.
func (a *Analysis) RetainedObjects(v uint32) uint64 {
	n := uint64(a.objects[v])
	if int(v) >= a.NumObjects && n > 0 {
		n-- // a root node is not an object
	}
	return n
}

// Idom returns the immediate dominator of node v, or dom.None for a node no
// root reaches.
func (a *Analysis) Idom(v uint32) uint32 { return a.tree.Idom(v) }

// isObject reports whether node v is an object (not a root or the super-root).
func (a *Analysis) isObject(v uint32) bool { return int(v) < a.NumObjects }

// holdingRoot returns the root node that dominates object v, or the
// super-root when several roots reach it, and the top-most object of its
// dominator chain (the object the root, or the super-root, immediately
// dominates).
func (a *Analysis) holdingRoot(v uint32) (root, top uint32) {
	top = v
	for u := range a.tree.Chain(v) {
		if !a.isObject(u) {
			return u, top
		}
		top = u
	}
	return a.SuperRoot, top
}

// Explain returns the holder of the object at each address: the root that
// keeps it alive, the typed path to it and what it retains. The result is
// parallel to addrs; an entry is nil when no object contains the address
// or no root reaches it (the object is garbage).
func (a *Analysis) Explain(addrs []uint64) ([]*Group, error) {
	out := make([]*Group, len(addrs))
	var objs []uint32
	var at []int
	for i, addr := range addrs {
		v, ok := a.Find(addr)
		if !ok || !a.tree.Reachable(v) {
			continue
		}
		objs = append(objs, v)
		at = append(at, i)
	}
	groups, err := a.describe(objs, false)
	if err != nil {
		return nil, err
	}
	for k, g := range groups {
		out[at[k]] = g
	}
	return out, nil
}

// exactOtherRoots is the number of shared objects up to which describe, for
// grouped output, still lists the other roots of every one of them; tests
// change it.
var exactOtherRoots = 16

// describe builds one ungrouped Group per object: its holder, path, type
// and sizes. Paths are found root by root, one search for all the objects
// a root holds.
//
// When grouped is set, the caller merges the groups by key, keeping the
// OtherRoots of the first group of each key only, and may show only some of
// them. Then, past exactOtherRoots shared objects, describe finds whether
// other roots reach each one (which the key depends on) from the reachers,
// computed once, and leaves the listing of those roots to the caller
// (otherRoots, on the groups it shows): one search back from each shared
// object costs as much as the objects that reach it, which makes a search
// per object quadratic on a long list shared with a map.
func (a *Analysis) describe(objs []uint32, grouped bool) ([]*Group, error) {
	out := make([]*Group, len(objs))
	byRoot := map[uint32][]int{}
	var roots []uint32
	for i, v := range objs {
		r, _ := a.holdingRoot(v)
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], i)
	}
	slices.Sort(roots)
	if grouped && len(byRoot[a.SuperRoot]) > exactOtherRoots && a.reach == nil {
		a.reach = a.reachersOf()
	}
	lazy := grouped && a.reach != nil
	for _, r := range roots {
		idx := byRoot[r]
		targets := make([]uint32, len(idx))
		for k, i := range idx {
			targets[k] = objs[i]
		}
		paths := a.shortestPaths(r, targets)
		a.types.newSearch()
		for k, i := range idx {
			p := paths[k]
			if p == nil {
				return nil, errors.New("heap: internal error: no path from the dominating root")
			}
			g, err := a.group(p, lazy)
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
	}
	return out, nil
}
