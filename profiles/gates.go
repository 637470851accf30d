package profiles

import (
	"fmt"

	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// Gates are the limits a CI run holds profiles to. A nil limit is not
// checked; a gate trips when its value is over the limit.
type Gates struct {
	// Growth limits the heap's in-use growth against the base, in bytes.
	Growth *int64
	// Retained limits the request-scoped bytes still in use.
	Retained *int64
	// Goroutines limits the goroutines that still carry request labels
	// off the request path (captured request contexts).
	Goroutines *int64
	// GoroutineGrowth limits the goroutines gained against a base
	// goroutine profile (GoroutineGrowth.Growth). Unlike the other gates,
	// it trips when the growth reaches the limit, as goleak fails on one
	// leaked goroutine: a limit of 1 allows none.
	GoroutineGrowth *int64
	// Leaked limits the goroutines a goroutineleak profile (Go 1.27)
	// proved leaked; CheckReport checks it.
	Leaked *int64
}

// Gate names.
const (
	GateGrowth     = "growth"
	GateRetained   = "retained"
	GateGoroutines = "goroutines"
	// GateGoroutineGrowth is the gate of Gates.GoroutineGrowth.
	GateGoroutineGrowth = "goroutine-growth"
	// GateLeaked is the gate of Gates.Leaked.
	GateLeaked = "leaked-goroutines"
)

// IsCountGate reports whether a gate's limit and value count goroutines;
// those of the other gates are bytes.
func IsCountGate(gate string) bool {
	return gate == GateGoroutines || gate == GateGoroutineGrowth || gate == GateLeaked
}

// GateResult is the outcome of one gate.
type GateResult struct {
	// Gate is GateGrowth, GateRetained, GateGoroutines or
	// GateGoroutineGrowth.
	Gate string
	// Limit and Value are bytes for the growth and retained gates, and
	// goroutines for the goroutine gates (see IsCountGate).
	Limit, Value int64
	// Tripped says Value is over Limit (reaches it, for the goroutine
	// growth gate).
	Tripped bool
	// Reason says what was measured against what, in words.
	Reason string
}

// Check applies the gates to the reports. A gate that needs a report it
// does not have (heap growth without a base, goroutines without a
// goroutine profile) is an error.
func (g Gates) Check(heap *HeapReport, goroutines *GoroutineReport) ([]GateResult, error) {
	var out []GateResult
	if g.Growth != nil {
		if heap == nil || heap.Base == nil {
			return nil, fmt.Errorf("the growth gate needs a heap profile and a base heap profile")
		}
		v := heap.Base.GrowthBytes
		res := GateResult{Gate: GateGrowth, Limit: *g.Growth, Value: v, Tripped: v > *g.Growth}
		res.Reason = fmt.Sprintf("heap in use grew by %s against the base", bytesize.FormatDelta(v))
		if heap.Base.Requests > 0 {
			res.Reason += fmt.Sprintf(" (%s per request over %d requests)",
				bytesize.FormatDelta(int64(heap.Base.PerRequestBytes)), heap.Base.Requests)
		}
		res.Reason += verdict(res, bytesize.Format(*g.Growth))
		out = append(out, res)
	}
	if g.Retained != nil {
		if heap == nil {
			return nil, fmt.Errorf("the retained gate needs a heap profile")
		}
		v := heap.RequestBytes
		res := GateResult{Gate: GateRetained, Limit: *g.Retained, Value: v, Tripped: v > *g.Retained}
		res.Reason = fmt.Sprintf("%s allocated on request paths is still in use", bytesize.Format(v)) +
			verdict(res, bytesize.Format(*g.Retained))
		out = append(out, res)
	}
	if g.Goroutines != nil {
		if goroutines == nil {
			return nil, fmt.Errorf("the goroutines gate needs a goroutine profile")
		}
		v := goroutines.Captured
		res := GateResult{Gate: GateGoroutines, Limit: *g.Goroutines, Value: v, Tripped: v > *g.Goroutines}
		res.Reason = fmt.Sprintf("%d goroutines off the request path still carry request labels", v) +
			verdict(res, fmt.Sprint(*g.Goroutines))
		out = append(out, res)
	}
	if g.GoroutineGrowth != nil {
		if goroutines == nil || goroutines.Base == nil {
			return nil, fmt.Errorf("the goroutine growth gate needs a goroutine profile and a base goroutine profile")
		}
		v := goroutines.Base.Growth
		res := GateResult{Gate: GateGoroutineGrowth, Limit: *g.GoroutineGrowth, Value: v, Tripped: v >= *g.GoroutineGrowth}
		res.Reason = fmt.Sprintf("%+d goroutines against the base in %d groups that grew", v, len(goroutines.Base.Groups))
		if res.Tripped {
			res.Reason += fmt.Sprintf(", at or over the limit of %d", *g.GoroutineGrowth)
		} else {
			res.Reason += fmt.Sprintf(", under the limit of %d", *g.GoroutineGrowth)
		}
		out = append(out, res)
	}
	return out, nil
}

func verdict(r GateResult, limit string) string {
	if r.Tripped {
		return ", over the limit of " + limit
	}
	return ", within the limit of " + limit
}
