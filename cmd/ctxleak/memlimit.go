package main

import (
	"os"
	"runtime/debug"

	"github.com/ctxleak/ctxleak/heapdump"
)

// Memory targets of issue 10: ctxleak holders stays within 256 MiB plus
// 1.5 times the dump's size; ctxleak analyze within 256 MiB plus a bounded
// multiple of the profile size limit. The readers refuse inputs whose
// records would take more (heapdump's budget, profiles' decode cost), but
// the garbage collector lets the heap grow to twice what is live before it
// runs: near the budget, that headroom alone would pass the target.
const memBase = 256 << 20

// limitMemory makes the garbage collector work harder as the process
// nears limit bytes (a soft limit, debug.SetMemoryLimit), unless the user
// set GOMEMLIMIT. It never lowers a limit set before.
func limitMemory(limit int64) {
	if os.Getenv("GOMEMLIMIT") != "" || limit <= 0 {
		return
	}
	if cur := debug.SetMemoryLimit(-1); cur < limit {
		return
	}
	debug.SetMemoryLimit(limit)
}

// dumpMemoryLimit is the target for analysing the dump at path whose
// analysis may take budget bytes (--max-memory; 0 for the reader's default,
// heapdump.DefaultMemoryLimit): the budget and the headroom memBase leaves
// above the default's base, so 256 MiB plus 1.5 times the dump by default.
func dumpMemoryLimit(path string, budget int64) int64 {
	if budget <= 0 {
		st, err := os.Stat(path)
		if err != nil {
			return 0
		}
		budget = heapdump.DefaultMemoryLimit(st.Size())
	}
	return budget + memBase - heapdump.DefaultMemoryLimit(0)
}

// tuneGCForDump sets the collector for analysing the dump at path: the
// soft memory limit of dumpMemoryLimit, unless GOMEMLIMIT says otherwise.
// It leaves the collection target at GOGC's default of 100%. A target of
// 25% once kept the garbage of the reader's growing arrays from staying
// resident (100,000 goroutines, 600 MB: peak RSS 363 -> 256 MB); since the
// reader sizes its arrays ahead, 100% costs little memory and saves the
// collections' work: 2M, 10M nodes and 100,000 goroutines took 8%, 2% and
// 6% less time, at a peak RSS of 115, 487 and 207 MB rather than 113, 488
// and 201 (paired runs, medians).
func tuneGCForDump(path string, budget int64) {
	limitMemory(dumpMemoryLimit(path, budget))
}

// profileGCPercent is the collector's target heap growth while a command
// decodes pprof profiles, in percent.
const profileGCPercent = 400

// tuneGCForProfiles sets the collector for decoding profiles of at most
// maxBytes each: a soft memory limit of 256 MiB plus the 4 times maxBytes
// the decoders may take in all, and a collection at every 400% of heap
// growth rather than 100%, each unless GOMEMLIMIT or GOGC says otherwise.
// google/pprof's decoder grew its tables by append, each growth one copy
// that a collection cannot preempt: on a virtual machine, where every
// signal and page fault is a trip to the hypervisor, a collection
// signalling such a copy again and again took more time than the decoding
// (a profile of 5 million strings, interleaved runs: 3.57 to 4.25 s at the
// default 100%, 2.30 to 2.69 s at 400%). profiles' own proto decoder sizes
// its arrays first (the same profile: 0.83 to 0.90 s at either setting);
// pprof's legacy text parsers, which profiles still uses, append. The
// limit keeps the memory within what the decoders' budget promises.
func tuneGCForProfiles(maxBytes int64) {
	limitMemory(memBase + 4*maxBytes)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(profileGCPercent)
	}
}
