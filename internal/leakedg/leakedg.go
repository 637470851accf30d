// Package leakedg finds the goroutines that Go 1.27's goroutineleak
// profile (runtime/pprof) marked leaked, and what each keeps alive in a
// heap dump taken just before the profile.
//
// The profile itself has stacks and counts but no goroutine ids; the
// runtime's traceback of all goroutines (runtime.Stack) prints each marked
// goroutine's header as "goroutine 21 [chan send (leaked)]:", with its id.
// A heap dump taken before the profile (selfdump.WriteThenProfileLeaks: a
// dump after it is fatal) has the same goroutines under the same ids.
package leakedg

import (
	"bytes"
	"strings"

	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/heapdump"
	"github.com/ctxleak/ctxleak/internal/traceback"
)

// Goroutine is a goroutine the runtime marked leaked.
type Goroutine struct {
	ID uint64 `json:"goroutine_id"`
	// Wait is its wait reason, such as "chan send".
	Wait string `json:"wait"`
	// Function is its innermost frame outside package runtime, Location
	// that frame's file:line.
	Function string `json:"function"`
	Location string `json:"location"`
	// CreatedBy is the function whose go statement started it, CreatedAt
	// that statement's file:line; empty for the main goroutine.
	CreatedBy string `json:"created_by,omitempty"`
	CreatedAt string `json:"created_at,omitempty"`
	// InDump says whether the heap dump has the goroutine; Retained is
	// what its roots (frames, defers, panics, its runtime.g) alone keep
	// alive there: bytes another root reaches too are not counted.
	InDump   bool   `json:"in_dump"`
	Retained uint64 `json:"retained_bytes"`
	// Functions are the functions of its frames the traceback shows,
	// innermost first (inlined calls included, the runtime's and the
	// wrappers of go statements left out, as tracebacks do).
	Functions []string `json:"-"`
}

// maxStacks bounds the traceback read: past it the goroutines are those
// of its first 64 MiB, and Truncated says so.
const maxStacks = 64 << 20

// Marked returns the goroutines marked leaked now, from a traceback of all
// goroutines, and whether the traceback was cut at 64 MiB.
func Marked() (gs []Goroutine, truncated bool) {
	stacks, truncated := traceback.All(maxStacks)
	return Parse(stacks, true), truncated
}

// IDs returns the ids of all the goroutines of the process now, from a
// traceback of all goroutines (the first 64 MiB of it).
func IDs() map[uint64]bool {
	stacks, _ := traceback.All(maxStacks)
	ids := make(map[uint64]bool)
	for _, g := range Parse(stacks, false) {
		ids[g.ID] = true
	}
	return ids
}

// Parse reads the goroutines of a traceback in runtime.Stack's format:
// only those marked leaked when leakedOnly is set. A header line is
// "goroutine ID [STATUS...]:"; lines that fit no expected shape are
// skipped, so any input gives a result in one pass.
func Parse(stacks []byte, leakedOnly bool) []Goroutine {
	var gs []Goroutine
	var cur *Goroutine
	var prev string // the previous line, a frame's function
	for len(stacks) > 0 {
		line := stacks
		if i := bytes.IndexByte(stacks, '\n'); i >= 0 {
			line, stacks = stacks[:i], stacks[i+1:]
		} else {
			stacks = nil
		}
		s := string(line)
		if id, wait, leaked, ok := traceback.Header(s); ok {
			g := Goroutine{ID: id, Wait: wait}
			cur = nil
			if leaked || !leakedOnly {
				gs = append(gs, g)
				cur = &gs[len(gs)-1]
			}
			prev = ""
			continue
		}
		if cur == nil {
			continue
		}
		if loc, ok := strings.CutPrefix(s, "\t"); ok {
			loc, _, _ = strings.Cut(loc, " +0x")
			if prev != "" && !strings.HasPrefix(prev, "created by ") {
				cur.Functions = append(cur.Functions, prev)
			}
			switch {
			case strings.HasPrefix(prev, "created by "):
				cur.CreatedAt = loc
			case prev != "" && cur.Function == "" && !strings.HasPrefix(prev, "runtime."):
				cur.Function, cur.Location = prev, loc
			}
			continue
		}
		if by, ok := strings.CutPrefix(s, "created by "); ok {
			by, _, _ = strings.Cut(by, " in goroutine ")
			cur.CreatedBy = by
			prev = s
			continue
		}
		prev = funcName(s)
	}
	return gs
}

// funcName returns the function of a frame line "main.(*T).m(0x1, ...)",
// or "" for a line of another shape.
func funcName(s string) string {
	if i := strings.LastIndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
		return s[:i]
	}
	return ""
}

// Retained fills InDump and Retained of gs from the analysis a of a heap
// dump taken before the profile that marked them, and returns how many
// are in the dump and the bytes they retain in all. The sum counts no
// byte twice: each root's retained set is what it alone dominates.
func Retained(a *heap.Analysis, gs []Goroutine) (matched int, total uint64) {
	byID := make(map[uint64]int, len(gs))
	for i, g := range gs {
		byID[g.ID] = i
	}
	gr := a.Graph()
	d := gr.Dump()
	gr.ForEachRoot(func(r *heapdump.Root) bool {
		if r.Goroutine < 0 || r.Goroutine >= len(d.Goroutines) {
			return true
		}
		i, ok := byID[d.Goroutines[r.Goroutine].ID]
		if !ok {
			return true
		}
		b := a.Retained(r.Node)
		gs[i].Retained += b
		total += b
		return true
	})
	for _, g := range d.Goroutines {
		if i, ok := byID[g.ID]; ok && !gs[i].InDump {
			gs[i].InDump = true
			matched++
		}
	}
	return matched, total
}
