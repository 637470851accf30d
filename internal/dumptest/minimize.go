package dumptest

import (
	"encoding/binary"
	"slices"
	"testing"
)

// Minimized cuts a real dump down to a few records of every kind, so
// the fuzzer starts from real structure at a size it can mutate quickly:
// a dozen small objects, the goroutine blocked in waitHeld with its
// frames, the first 64 bytes of the data and bss segments.
func Minimized(t testing.TB) []byte {
	t.Helper()
	b := Run(t, "-small").Bytes(t)
	recs, err := Walk(b)
	if err != nil {
		t.Fatal(err)
	}
	// The goroutine whose frames include main.waitHeld.
	keepG := -1
	for i, r := range recs {
		if r.Tag == tagStackFrame && string(r.Fields[7].S) == "main.waitHeld" {
			for keepG = i; recs[keepG].Tag != tagGoroutine; keepG-- {
			}
		}
	}
	// Objects the kept goroutine's frames point into stay, so the seed has
	// frame roots.
	var framePtrs []uint64
	for i := keepG + 1; i < len(recs) && recs[i].Tag == tagStackFrame; i++ {
		contents := recs[i].Fields[3].S
		for _, o := range recs[i].Fields[8].Ptrs {
			framePtrs = append(framePtrs, binary.LittleEndian.Uint64(contents[o:]))
		}
	}
	pointedTo := func(r Record) bool {
		addr, size := r.Fields[0].U, uint64(len(r.Fields[1].S))
		return slices.ContainsFunc(framePtrs, func(v uint64) bool { return v >= addr && v-addr < size })
	}
	e := NewEncoder()
	count := map[uint64]int{}
	inG := false
	for i, r := range recs {
		switch r.Tag {
		case tagGoroutine:
			inG = i == keepG
		case tagStackFrame, tagDefer, tagPanic:
		default:
			inG = false
		}
		switch r.Tag {
		case tagObject:
			if len(r.Fields[1].S) > 128 || count[r.Tag] >= 12 && !pointedTo(r) {
				continue
			}
		case tagType, tagItab, tagOSThread, tagMemProf, tagAllocSample, tagFinalizer, tagQueuedFinalizer:
			if count[r.Tag] >= 2 {
				continue
			}
		case tagGoroutine, tagStackFrame, tagDefer, tagPanic:
			if !inG {
				continue
			}
		case tagData, tagBSS:
			contents := r.Fields[1].S[:min(64, len(r.Fields[1].S))]
			var ptrs []uint64
			for _, o := range r.Fields[2].Ptrs {
				if o < uint64(len(contents)) {
					ptrs = append(ptrs, o)
				}
			}
			e.U(r.Tag, r.Fields[0].U).S(contents).Fields(ptrs)
			continue
		}
		count[r.Tag]++
		e.Record(r)
	}
	return e.B
}
