package heap

import (
	"testing"
)

// TestHoldersLeaks marks the group of the goroutine a Leaks names, by id
// with its stack, or by stack, lists it first, and accounts for every
// leaked goroutine named: in the group, holding nothing of MinSize, in no
// goroutine of the dump, or under its id with another stack.
func TestHoldersLeaks(t *testing.T) {
	a := runPattern(t, "goroutine").analyze(t, "")
	g := payloadGroup(t, a)
	if len(g.Goroutines) != 1 {
		t.Fatalf("payload held by goroutines %v, want one", g.Goroutines)
	}
	id := g.Goroutines[0]
	var funcs []string
	for i, gr := range a.d.Goroutines {
		if gr.ID == id {
			funcs = a.goroutineFuncs(nil, i)
		}
	}
	stack := LeakedStack{Functions: funcs, Wait: "chan receive", Count: 1}
	other := LeakedStack{Functions: []string{"main.elsewhere"}, Count: 1}
	for _, c := range []struct {
		name   string
		leaks  Leaks
		opts   []Option
		marked bool
		want   LeakMatch // without Groups and RetainedBytes
	}{
		{"id", Leaks{IDs: map[uint64]LeakedStack{id: stack, 1 << 40: stack}}, nil, true,
			LeakMatch{By: "goroutine_id", Total: 2, InGroups: 1, NotInDump: 1}},
		{"id of another stack", Leaks{IDs: map[uint64]LeakedStack{id: other}}, nil, false,
			LeakMatch{By: "goroutine_id", Total: 1, OtherStack: 1}},
		{"stack", Leaks{Stacks: []LeakedStack{{Functions: funcs, Wait: "chan receive", Count: 3}, other}}, nil, true,
			LeakMatch{By: "stack", Total: 4, InGroups: 1, NotInDump: 3}},
		{"stack, other wait", Leaks{Stacks: []LeakedStack{{Functions: funcs, Wait: "select", Count: 1}}}, nil, false,
			LeakMatch{By: "stack", Total: 1, NotInDump: 1}},
		{"min size", Leaks{IDs: map[uint64]LeakedStack{id: stack}}, []Option{MinSize(1 << 30)}, false,
			LeakMatch{By: "goroutine_id", Total: 1, HoldNothing: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := c.leaks
			rep, err := a.Holders(append(c.opts, LeakedGoroutines(&l))...)
			if err != nil {
				t.Fatal(err)
			}
			m := rep.Leaks
			if m == nil {
				t.Fatal("no Leaks in the report")
			}
			got := *m
			got.Groups, got.RetainedBytes = 0, 0
			if got != c.want {
				t.Errorf("Leaks %+v, want %+v", got, c.want)
			}
			if !c.marked {
				if m.Groups != 0 || len(rep.Groups) > 0 && rep.Groups[0].Leaked != nil && rep.Groups[0].Leaked.Count > 0 {
					t.Errorf("a group is marked: %+v", m)
				}
				return
			}
			first := rep.Groups[0]
			if l := first.Leaked; l == nil || l.Count != 1 || l.Wait != "chan receive" || l.RetainedBytes != first.RetainedBytes ||
				first.Object.Size < payloadSize || m.Groups != 1 || m.RetainedBytes != first.RetainedBytes {
				t.Errorf("first group %+v, leaked %+v; match %+v", first, first.Leaked, m)
			}
		})
	}
	// Without the option, nothing is marked.
	rep, err := a.Holders()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		if g.Leaked != nil || rep.Leaks != nil {
			t.Errorf("marked without a profile: %+v", g)
		}
	}
}

func TestIsWrapper(t *testing.T) {
	for fn, want := range map[string]bool{
		"main.main.gowrap1": true, "main.(*T).run.deferwrap12": true, "main.gowrap": false,
		"main.gowrapper": false, "main.send": false, "gowrap1": true, "": false,
	} {
		if got := isWrapper(fn); got != want {
			t.Errorf("isWrapper(%q) = %v", fn, got)
		}
	}
	if stackKey([]string{"runtime.gopark", "main.send", "main.main.gowrap1"}, "chan send") != stackKey([]string{"main.send"}, "chan send") {
		t.Error("stackKey compares runtime frames or wrappers")
	}
	if stackKey([]string{"runtime.gopark"}, "chan send") != "" {
		t.Error("a stack of runtime frames only has a key that can match")
	}
}
