package watch

import (
	"net/http"
	"strings"
)

// Middleware returns next wrapped so that, when next returns, the request's
// context (the value behind r.Context()) is expected to be unreachable
// within Options.Grace. The value is watched through a weak pointer; the
// middleware adds no goroutine and runs no GC.
//
// The label is the route pattern the request matched (r.Pattern, set by an
// http.ServeMux that next is or routes through on the same request), or else
// the method and the first segment of the path, as "GET /api/". After
// MaxLabels labels, further ones count as OtherLabel.
func (w *Watcher) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(rw, r)
		w.expectContext(r.Context(), requestKey(r))
	})
}

// labelKey identifies a label without building its name: a Track label or
// route pattern in name, or a method and path prefix.
type labelKey struct {
	name, method, prefix string
}

// label holds the counts of one label. Its counters are guarded by the
// Watcher's mu.
type label struct {
	name     string
	watched  uint64
	outlived uint64
}

// requestKey returns the label key of r, without allocating.
func requestKey(r *http.Request) labelKey {
	if r.Pattern != "" {
		return labelKey{name: r.Pattern}
	}
	p := r.URL.Path
	if i := strings.IndexByte(p[min(1, len(p)):], '/'); i >= 0 {
		p = p[:i+2]
	}
	return labelKey{method: r.Method, prefix: p}
}

// labelLocked returns the label of key, made on first use; w.mu is held.
func (w *Watcher) labelLocked(key labelKey) *label {
	if l, ok := w.labels[key]; ok {
		return l
	}
	if len(w.labels) >= MaxLabels {
		key = labelKey{name: OtherLabel}
		if l, ok := w.labels[key]; ok {
			return l
		}
	}
	// Copy the strings: a path is part of the request's memory.
	key = labelKey{strings.Clone(key.name), strings.Clone(key.method), strings.Clone(key.prefix)}
	name := key.name
	if name == "" {
		name = key.method + " " + key.prefix
	}
	l := &label{name: name}
	w.labels[key] = l
	w.order = append(w.order, l)
	return l
}
