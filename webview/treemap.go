package webview

import (
	"cmp"
	"slices"

	"github.com/ctxleak/ctxleak/heap"
)

// treemapView is the retained bytes of the report's groups by holder, and
// within a holder by the type of the retained object, laid out as a
// squarified treemap of Width by Height.
type treemapView struct {
	TotalBytes uint64     `json:"retained_bytes"`
	Holders    []tmHolder `json:"holders"`
	Width      float64    `json:"-"`
	Height     float64    `json:"-"`
}

// tmHolder is one holder of the treemap: the groups it holds, by type.
type tmHolder struct {
	Holder        string   `json:"holder"`
	RetainedBytes uint64   `json:"retained_bytes"`
	Types         []tmType `json:"types"`
	Rect          rect     `json:"-"`
}

// tmType is the retained bytes of one type under a holder, and the object
// of its largest group, which the rectangle links to.
type tmType struct {
	Type          string `json:"type"`
	RetainedBytes uint64 `json:"retained_bytes"`
	Object        string `json:"object_addr"`
	Rect          rect   `json:"-"`
}

// rect is a rectangle of the layout.
type rect struct{ X, Y, W, H float64 }

// Size of the drawing, in SVG user units.
const (
	treemapWidth  = 960
	treemapHeight = 540
	holderLabel   = 18 // the height of a holder's title bar
)

// newTreemap lays out rep's groups, each for what it retains outside the
// other groups' members (rep.Overlaps), so that no byte has two areas.
func newTreemap(rep *heap.Report) *treemapView {
	tv := &treemapView{Width: treemapWidth, Height: treemapHeight, Holders: []tmHolder{}}
	byHolder := map[string]int{}
	inside := map[int]uint64{} // by group number, from 1
	for _, o := range rep.Overlaps {
		inside[o.Group] += o.Bytes
	}
	for i, g := range rep.Groups {
		bytes := g.RetainedBytes - min(g.RetainedBytes, inside[i+1])
		if bytes == 0 {
			continue
		}
		name := g.Short()
		i, ok := byHolder[name]
		if !ok {
			i = len(tv.Holders)
			byHolder[name] = i
			tv.Holders = append(tv.Holders, tmHolder{Holder: name})
		}
		h := &tv.Holders[i]
		h.RetainedBytes += bytes
		tv.TotalBytes += bytes
		typ := g.Object.Type
		if typ == "" {
			typ = "unknown type"
		}
		k := slices.IndexFunc(h.Types, func(t tmType) bool { return t.Type == typ })
		if k < 0 {
			h.Types = append(h.Types, tmType{Type: typ, Object: g.Object.Addr})
			k = len(h.Types) - 1
		}
		h.Types[k].RetainedBytes += bytes
	}
	slices.SortStableFunc(tv.Holders, func(x, y tmHolder) int { return cmp.Compare(y.RetainedBytes, x.RetainedBytes) })
	vals := make([]float64, len(tv.Holders))
	for i, h := range tv.Holders {
		vals[i] = float64(h.RetainedBytes)
	}
	for i, r := range squarify(vals, rect{0, 0, tv.Width, tv.Height}) {
		h := &tv.Holders[i]
		h.Rect = r
		slices.SortStableFunc(h.Types, func(x, y tmType) int { return cmp.Compare(y.RetainedBytes, x.RetainedBytes) })
		inner := rect{r.X + 2, r.Y + holderLabel, r.W - 4, r.H - holderLabel - 2}
		if inner.W <= 0 || inner.H <= 0 {
			continue
		}
		tvals := make([]float64, len(h.Types))
		for k, t := range h.Types {
			tvals[k] = float64(t.RetainedBytes)
		}
		for k, tr := range squarify(tvals, inner) {
			h.Types[k].Rect = tr
		}
	}
	return tv
}

// squarify lays out vals, positive and largest first, in r: one rectangle
// each, of area in proportion, as close to squares as the squarified
// treemap algorithm (Bruls, Huizing, van Wijk) gets them.
func squarify(vals []float64, r rect) []rect {
	out := make([]rect, len(vals))
	var total float64
	for _, v := range vals {
		total += v
	}
	if total <= 0 || r.W <= 0 || r.H <= 0 {
		return out
	}
	scale := r.W * r.H / total
	area := func(k int) float64 { return vals[k] * scale }
	// worst is the largest aspect ratio of the row vals[i:j] laid along a
	// side of length side.
	worst := func(i, j int, side float64) float64 {
		var sum, mx, mn float64
		mn = area(i)
		for k := i; k < j; k++ {
			a := area(k)
			sum += a
			mx, mn = max(mx, a), min(mn, a)
		}
		if mn <= 0 {
			return 1e300
		}
		s2, side2 := sum*sum, side*side
		return max(side2*mx/s2, s2/(side2*mn))
	}
	for i := 0; i < len(vals); {
		side := min(r.W, r.H)
		j := i + 1
		best := worst(i, j, side)
		for j < len(vals) {
			w := worst(i, j+1, side)
			if w > best {
				break
			}
			best = w
			j++
		}
		var sum float64
		for k := i; k < j; k++ {
			sum += area(k)
		}
		if r.W >= r.H {
			w := sum / r.H
			y := r.Y
			for k := i; k < j; k++ {
				h := area(k) / w
				out[k] = rect{r.X, y, w, h}
				y += h
			}
			r.X += w
			r.W -= w
		} else {
			h := sum / r.W
			x := r.X
			for k := i; k < j; k++ {
				w := area(k) / h
				out[k] = rect{x, r.Y, w, h}
				x += w
			}
			r.Y += h
			r.H -= h
		}
		i = j
	}
	return out
}
