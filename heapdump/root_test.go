package heapdump

import "testing"

// Every root kind has a name, which reads back as the kind; the names are
// the words reports have always written.
func TestRootKindText(t *testing.T) {
	want := map[RootKind]string{
		RootFrame: "frame", RootGoroutine: "goroutine", RootGlobal: "global", RootFinalizer: "finalizer",
		RootQueuedFinalizer: "queued finalizer", RootOther: "other", RootTimer: "timer",
	}
	for k, name := range want {
		b, err := k.MarshalText()
		if err != nil || string(b) != name || k.String() != name {
			t.Errorf("kind %d: MarshalText %q, %v; String %q; want %q", k, b, err, k.String(), name)
		}
		var back RootKind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("UnmarshalText(%q) = %d, %v; want %d", b, back, err, k)
		}
	}
	if s := RootKind(0).String(); s != "unknown" {
		t.Errorf("zero kind is %q, want unknown", s)
	}
	var k RootKind
	if err := k.UnmarshalText([]byte("nonsense")); err == nil {
		t.Error("UnmarshalText accepted an unknown name")
	}
}
