package webview

import (
	"testing"

	"github.com/ctxleak/ctxleak/heap"
)

// A group inside another group's members has an area for what it retains
// outside them only: the treemap's total is what the groups retain
// together.
func TestTreemapOverlap(t *testing.T) {
	outer := &heap.Group{Root: heap.Holder{Global: "main.chain"}, RetainedBytes: 6000, Count: 1}
	outer.Object.Type = "main.link"
	nested := &heap.Group{Root: outer.Root, RetainedBytes: 5999, Count: 5999, NestedCount: 5998}
	nested.Object.Type = "main.link"
	rep := &heap.Report{
		Groups:       []*heap.Group{outer, nested},
		OverlapBytes: 5999,
		Overlaps:     []heap.Overlap{{Group: 2, Within: 1, Bytes: 5999}},
	}
	tv := newTreemap(rep)
	if tv.TotalBytes != 6000 {
		t.Errorf("treemap total %d, want 6000: the second group is inside the first", tv.TotalBytes)
	}
	rep.Overlaps, rep.OverlapBytes = nil, 0
	if tv := newTreemap(rep); tv.TotalBytes != 11999 {
		t.Errorf("treemap total %d without overlaps, want 11999", tv.TotalBytes)
	}
}
