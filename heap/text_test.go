package heap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
)

// The header says how many groups are shown out of how many, each count
// with its noun once: no "1 groups", no "3 groups of 33 groups".
func TestReportHeaderWording(t *testing.T) {
	g := &Group{Root: Holder{Kind: heapdump.RootGlobal, Global: "main.cache"}, Count: 1, RetainedBytes: 200}
	small := &Group{Root: Holder{Kind: heapdump.RootGlobal, Global: "main.slots"}, Count: 1, RetainedBytes: 100}
	for _, tt := range []struct {
		shown, total int
		want         string
		small        bool // one group of a global, under MinSize alone
	}{
		{0, 1, "No group matches (1 group of 150 B or more in all).\n", false},
		{0, 33, "No group matches (33 groups of 150 B or more in all).\n", false},
		{3, 33, "3 of 33 groups of 150 B or more, most retained first:\n", false},
		{1, 1, "1 group of 150 B or more, most retained first:\n", false},
		{2, 2, "2 groups of 150 B or more, most retained first:\n", false},
		{2, 2, "2 groups of 150 B or more (one global's groups counted together), most retained first:\n", true},
	} {
		rep := &Report{Dump: "app.heapdump", MinSize: 150, GroupsTotal: tt.total}
		for range tt.shown {
			rep.Groups = append(rep.Groups, g)
		}
		if tt.small {
			rep.Groups[len(rep.Groups)-1] = small
		}
		var b strings.Builder
		if err := rep.WriteText(&b, PlainStyle{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "\n\n"+tt.want) {
			t.Errorf("%d of %d groups: want %q in\n%s", tt.shown, tt.total, tt.want, b.String())
		}
	}
}

// A group of objects held alike by several goroutines names them all,
// with their count, in its text and in its short form.
func TestGroupGoroutinesText(t *testing.T) {
	g := &Group{
		Root: Holder{Kind: heapdump.RootFrame, Goroutine: 12, Status: "chan receive", Function: "main.worker",
			RetainedBytes: 2 << 20, Objects: 3},
		Count: 3, Goroutines: []uint64{12, 14, 15}, RetainedBytes: 6 << 20, Objects: 9,
		Object: Object{Type: "[]uint8", Size: 2 << 20},
	}
	text := g.Text("#1", PlainStyle{})
	for _, want := range []string{
		"#1 3 goroutines in main.worker hold 6.0 MiB: 3 x []uint8 of 2.0 MiB\n",
		"    held by 3 goroutines (12, 14 and 15), frame main.worker\n",
		"    the frame of goroutine 12 retains 2.0 MiB in 3 objects\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in\n%s", want, text)
		}
	}
	if got, want := g.Short(), "3 goroutines (12, 14 and 15) frame main.worker"; got != want {
		t.Errorf("Short() = %q, want %q", got, want)
	}
	many := &Group{Root: Holder{Kind: heapdump.RootGoroutine, Goroutine: 1, Detail: DetailLabels}}
	for id := range uint64(11) {
		many.Goroutines = append(many.Goroutines, id+1)
	}
	if got, want := many.Short(), "11 goroutines (1, 2, 3, 4, 5, 6, 7, 8 and 3 more)"; got != want {
		t.Errorf("Short() = %q, want %q", got, want)
	}
	one := &Group{Root: Holder{Kind: heapdump.RootFrame, Goroutine: 12, Function: "main.worker"}, Goroutines: []uint64{12}}
	if got, want := one.Short(), "goroutine 12 frame main.worker"; got != want {
		t.Errorf("Short() = %q, want %q", got, want)
	}
}

// Three uploads held by three goroutines alike make one group that names
// the three goroutines, in text and JSON.
func TestHoldersThreeGoroutines(t *testing.T) {
	r := runPattern(t, "three-uploads")
	if len(r.Goroutines) != 3 {
		t.Fatalf("the program reports goroutines %v, want 3", r.Goroutines)
	}
	rep, err := r.analyze(t, "").Holders()
	if err != nil {
		t.Fatal(err)
	}
	var g *Group
	for _, x := range rep.Groups {
		if x.Object.Size >= payloadSize {
			if g != nil {
				t.Fatalf("two groups hold payloads: %s and %s", g.Short(), x.Short())
			}
			g = x
		}
	}
	if g == nil {
		t.Fatalf("no group for the payloads in %d groups", len(rep.Groups))
	}
	want := slices.Sorted(slices.Values(r.Goroutines))
	if g.Count != 3 || !slices.Equal(g.Goroutines, want) {
		t.Fatalf("group of %d objects held by goroutines %v; want 3 held by %v", g.Count, g.Goroutines, want)
	}
	ids := fmt.Sprintf("3 goroutines (%d, %d and %d)", want[0], want[1], want[2])
	if text := g.Text("#1", PlainStyle{}); !strings.Contains(text, "held by "+ids+", frame main.waitThenUse") {
		t.Errorf("text does not name the 3 goroutines as %q:\n%s", ids, text)
	}
	if s := g.Short(); s != ids+" frame main.waitThenUse" {
		t.Errorf("Short() = %q", s)
	}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if key := fmt.Sprintf(`"goroutine_ids":[%d,%d,%d]`, want[0], want[1], want[2]); !bytes.Contains(b, []byte(key)) {
		t.Errorf("no %s in %s", key, b)
	}
}

// widthStyle is PlainStyle fitted to a width.
type widthStyle struct {
	PlainStyle
	width int
}

func (s widthStyle) Width() int { return s.width }

// At 80 columns no line of the report is wider than 80, and a path with a
// long type name keeps its sizes aligned.
func TestReportFitsWidth(t *testing.T) {
	rep := sampleReport()
	long := "map[github.com/ctxleak/ctxleak/internal/some/deeply/nested/package.Key]github.com/ctxleak/ctxleak/internal/some/deeply/nested/package.Value"
	rep.Groups[2].Path = append(rep.Groups[2].Path, Step{Via: ".entries", Type: long, Addr: "0xc000031000", Size: 4096, RetainedBytes: 3 << 20, Objects: 8999})
	for _, width := range []int{0, 80} {
		var b strings.Builder
		if err := rep.WriteText(&b, widthStyle{width: width}); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		var sizeCols []int
		for _, line := range strings.Split(text, "\n") {
			if width > 0 && len(line) > width {
				t.Errorf("width %d: line of %d: %q", width, len(line), line)
			}
			if strings.HasSuffix(line, "retains 3.0 MiB in 9000 objects") || strings.HasSuffix(line, "retains 3.0 MiB in 8999 objects") {
				sizeCols = append(sizeCols, strings.Index(line, "  retains"))
			}
		}
		if len(sizeCols) != 2 || sizeCols[0] != sizeCols[1] || sizeCols[0] < 0 {
			t.Errorf("width %d: the sizes of the map's path are not aligned (%v):\n%s", width, sizeCols, text)
		}
		if width > 0 && !strings.Contains(text, "...") {
			t.Errorf("width %d: the long type is not shortened:\n%s", width, text)
		}
		if width == 0 && !strings.Contains(text, long) {
			t.Errorf("no width: the long type is shortened:\n%s", text)
		}
	}
}
