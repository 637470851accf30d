package heap

import "slices"

// slotRun returns the address of the first slot of the run of consecutive
// pointer slots of the data or bss segment that holds the slot at addr:
// without symbols, the one thing that tells that the slots of an array of
// pointers belong together. It returns addr when no segment has a pointer
// slot there. The runs are found in one pass over the segments' pointer
// slots on first use.
func (a *Analysis) slotRun(addr uint64) uint64 {
	if a.runStarts == nil {
		a.runStarts = make([][]uint64, len(a.d.Segments))
		ps := uint64(a.d.Params.PtrSize)
		for i, seg := range a.d.Segments {
			starts := make([]uint64, len(seg.PtrOffsets))
			for k, o := range seg.PtrOffsets {
				starts[k] = o
				if k > 0 && o == seg.PtrOffsets[k-1]+ps {
					starts[k] = starts[k-1]
				}
			}
			a.runStarts[i] = starts
		}
	}
	for i, seg := range a.d.Segments {
		if addr < seg.Addr || addr-seg.Addr >= seg.Size {
			continue
		}
		if k, ok := slices.BinarySearch(seg.PtrOffsets, addr-seg.Addr); ok {
			return seg.Addr + a.runStarts[i][k]
		}
	}
	return addr
}
