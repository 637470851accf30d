package heap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxleak/ctxleak/heapdump"
)

// The typing tests run testdata/piles patterns of typing.go (statics,
// containers, finalizers, interior pointers) and check that the holder is
// named and the path typed. Each pattern holds typingN items of about 4 KiB.

const (
	typingN    = 200
	typingItem = 4 << 10
)

// typingReport runs pattern and returns its report with a MinSize that
// the pattern's items together pass, and its text.
func typingReport(t *testing.T, pattern string) (*Report, string, *pileRun) {
	t.Helper()
	r := runPile(t, pattern, typingN)
	rep, err := r.analyze(t).Holders(MinSize(typingN * typingItem / 2))
	if err != nil {
		t.Fatal(err)
	}
	return rep, reportText(t, rep), r
}

// checkRetains fails unless g retains the n items and little more.
func checkRetains(t *testing.T, g *Group, n int) {
	t.Helper()
	if g.RetainedBytes < uint64(n*typingItem) || g.RetainedBytes > uint64(n*(typingItem+512)) {
		t.Errorf("group retains %d bytes, want %d items of %d bytes and a little more", g.RetainedBytes, n, typingItem)
	}
}

// pathString is a group's path as "via>type" steps joined by " ".
func pathString(steps []Step) string {
	var b []string
	for _, s := range steps {
		b = append(b, s.Via+">"+s.Type)
	}
	return strings.Join(b, " ")
}

// checkTyped fails when a step of the path has no type or an offset as via.
func checkTyped(t *testing.T, steps []Step) {
	t.Helper()
	for _, s := range steps {
		if s.Type == "" || strings.HasPrefix(s.Via, "+") || strings.Contains(s.Via, "?") {
			t.Errorf("untyped step %q > %q in %s", s.Via, s.Type, pathString(steps))
		}
	}
}

// A value the linker allocated (var x = &T{}, or behind an interface as
// net/http.DefaultTransport) is named after the global that points to it
// and typed as what it points to.
func TestHoldersStatic(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pattern, global, addr, typ, via string
	}{
		{"static", "main.defaultStore", "store", "main.store", ".items"},
		{"static-iface", "main.defaultSink", "sink", "main.fileSink", ".pending"},
	} {
		t.Run(tt.pattern, func(t *testing.T) {
			rep, text, r := typingReport(t, tt.pattern)
			if len(rep.Groups) != 1 {
				t.Fatalf("%d groups, want 1:\n%s", len(rep.Groups), text)
			}
			g := rep.Groups[0]
			if g.Root.Kind != heapdump.RootGlobal || g.Root.Global != tt.global {
				t.Errorf("held by %+v, want global %s", g.Root, tt.global)
			}
			want := fmt.Sprintf("held by global %s (the %s it points to, allocated statically in the data segment)", tt.global, tt.typ)
			if !strings.Contains(text, want) {
				t.Errorf("no %q in\n%s", want, text)
			}
			if got := pathString(g.Path); got != tt.via+">[]*main.item" {
				t.Errorf("path %s, want %s>[]*main.item", got, tt.via)
			}
			if r.Addrs[tt.addr] == 0 {
				t.Errorf("the pattern printed no address of %s", tt.addr)
			}
			checkRetains(t, g, typingN)
		})
	}
}
