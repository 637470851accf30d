package watch

import (
	"expvar"
	"sync"
)

// The expvar variable "ctxleak" (served by expvar's /debug/vars) adds up the
// counts of the open Watchers of the process:
//
//	{"watched_count": 1200, "outlived_count": 3, "alive_count": 3, "reports_count": 1,
//	 "leaked_goroutine_count": 20, "leaked_retained_bytes": 327680,
//	 "labels": {"GET /leak": {"watched_count": 3, "outlived_count": 3, "alive_count": 3}}}
const expvarName = "ctxleak"

var watchers struct {
	sync.Mutex
	open map[*Watcher]struct{}
	once sync.Once
}

// expvarStats is the value of the expvar variable.
type expvarStats struct {
	Watched  uint64 `json:"watched_count"`
	Outlived uint64 `json:"outlived_count"`
	Alive    int    `json:"alive_count"`
	Reports  int    `json:"reports_count"`
	// The watchers of a process share its goroutines: the largest of
	// their last leak checks' counts and bytes.
	LeakedGoroutines    int                    `json:"leaked_goroutine_count"`
	LeakedRetainedBytes uint64                 `json:"leaked_retained_bytes"`
	Labels              map[string]*LabelStats `json:"labels"`
}

func publish(w *Watcher) {
	watchers.once.Do(func() {
		if expvar.Get(expvarName) == nil {
			expvar.Publish(expvarName, expvar.Func(expvarValue))
		}
	})
	watchers.Lock()
	defer watchers.Unlock()
	if watchers.open == nil {
		watchers.open = make(map[*Watcher]struct{})
	}
	watchers.open[w] = struct{}{}
}

func unpublish(w *Watcher) {
	watchers.Lock()
	defer watchers.Unlock()
	delete(watchers.open, w)
}

func expvarValue() any {
	watchers.Lock()
	open := make([]*Watcher, 0, len(watchers.open))
	for w := range watchers.open {
		open = append(open, w)
	}
	watchers.Unlock()
	v := expvarStats{Labels: make(map[string]*LabelStats)}
	for _, w := range open {
		st := w.Stats()
		v.Watched += st.Watched
		v.Outlived += st.Outlived
		v.Alive += st.Alive
		v.Reports += st.Reports
		v.LeakedGoroutines = max(v.LeakedGoroutines, st.LeakedGoroutines)
		v.LeakedRetainedBytes = max(v.LeakedRetainedBytes, st.LeakedRetainedBytes)
		for _, l := range st.Labels {
			sum := v.Labels[l.Label]
			if sum == nil {
				sum = &LabelStats{Label: l.Label}
				v.Labels[l.Label] = sum
			}
			sum.Watched += l.Watched
			sum.Outlived += l.Outlived
			sum.Alive += l.Alive
		}
	}
	return v
}
