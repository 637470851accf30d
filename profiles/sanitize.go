package profiles

import (
	"fmt"

	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/internal/textsafe"
	"github.com/google/pprof/profile"
)

// MaxTotal bounds the sum of one value (in-use bytes, in-use objects,
// goroutines) over the samples of one profile: 32 PiB, or 2^55 objects or
// goroutines, is far above any real process, and leaves room to add up
// many profiles and compare them without overflowing an int64.
const MaxTotal = 1 << 55

// maxSum bounds the sums of values over several profiles: a sum stays
// under it, and so do differences and sums of the sums.
const maxSum = 1 << 61

// checkValues refuses the negative values and the overflowing sums that
// no heap or goroutine profile of a real process has (a delta profile
// has negative values), so they cannot slip under a gate.
func checkValues(p *Profile) error {
	var cols []int
	switch p.Kind {
	case Heap:
		idx := inuseIndices(p.Prof)
		cols = idx[:]
	case Goroutine:
		cols = []int{0}
	}
	for _, col := range cols {
		var sum int64
		for i, s := range p.Prof.Sample {
			if col >= len(s.Value) {
				return fmt.Errorf("sample %d has %d values, fewer than its %d sample types", i, len(s.Value), len(p.Prof.SampleType))
			}
			v := s.Value[col]
			if v < 0 {
				return fmt.Errorf("sample %d has a negative %s value (%d): a profile of what is in use never has one (a delta profile?)",
					i, p.Prof.SampleType[col].Type, v)
			}
			if sum += v; sum > MaxTotal || sum < 0 {
				what := fmt.Sprint(int64(MaxTotal))
				if p.Kind == Heap && col == cols[0] {
					what = bytesize.Format(MaxTotal)
				}
				return fmt.Errorf("the %s values add up to more than %s at sample %d: no real profile does", p.Prof.SampleType[col].Type, what, i)
			}
		}
	}
	return nil
}

// escapeText escapes, in place, every string of prof that analyze prints
// or writes: function and file names, mapping files, label keys and
// values, comments (see textsafe.Escape). Profiles come from processes
// that may be hostile, and from files anyone can write.
func escapeText(prof *profile.Profile) {
	e := textsafe.Escape
	for _, f := range prof.Function {
		f.Name, f.SystemName, f.Filename = e(f.Name), e(f.SystemName), e(f.Filename)
	}
	for _, m := range prof.Mapping {
		m.File, m.BuildID = e(m.File), e(m.BuildID)
	}
	for _, st := range prof.SampleType {
		st.Type, st.Unit = e(st.Type), e(st.Unit)
	}
	if pt := prof.PeriodType; pt != nil {
		pt.Type, pt.Unit = e(pt.Type), e(pt.Unit)
	}
	for i, c := range prof.Comments {
		prof.Comments[i] = e(c)
	}
	prof.DefaultSampleType, prof.DocURL = e(prof.DefaultSampleType), e(prof.DocURL)
	prof.DropFrames, prof.KeepFrames = e(prof.DropFrames), e(prof.KeepFrames)
	for _, s := range prof.Sample {
		s.Label = escapeLabels(s.Label)
		s.NumUnit = escapeLabels(s.NumUnit)
		s.NumLabel = escapeKeys(s.NumLabel)
	}
}

func escapeLabels(m map[string][]string) map[string][]string {
	if m == nil {
		return nil
	}
	safe := true // every key is: one pass over the map, as a label bomb has a million keys
	for k, vs := range m {
		for i, v := range vs {
			vs[i] = textsafe.Escape(v)
		}
		safe = safe && textsafe.IsSafe(k)
	}
	if safe {
		return m
	}
	return escapeKeys(m)
}

// escapeKeys escapes the keys of m; keys that become one have their
// values joined.
func escapeKeys[V any](m map[string][]V) map[string][]V {
	safe := true
	for k := range m {
		if !textsafe.IsSafe(k) {
			safe = false
			break
		}
	}
	if safe {
		return m
	}
	out := make(map[string][]V, len(m))
	for k, vs := range m {
		ek := textsafe.Escape(k)
		out[ek] = append(out[ek], vs...)
	}
	return out
}
