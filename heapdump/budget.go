package heapdump

import "unsafe"

// Every record but the objects is kept in memory (Dump), and most of them
// become root nodes of the graph; objects are indexed by runs (groups). A
// crafted dump can make such records tiny (an other-root record takes 3
// bytes, its Root, RootSlot and node over 200; an object of a run of its
// own 17 bytes, its group over 100), so the parser counts what they will
// cost and refuses a dump past a budget that grows with the file: memory
// stays bounded by the file's size whatever the records say. Real dumps
// stay below it: their frames carry contents, their strings repeat, their
// runs hold many objects.

// sideBudgetBase and sideBudgetPerByte set the budget: base plus perByte
// times the file size. Dumps of 20,000
// goroutines 50 frames deep, or 100,000 goroutines, need about 1.4 times
// their size. Tests lower them.
var (
	sideBudgetBase    int64 = 128 << 20
	sideBudgetPerByte       = 1.5
)

// Estimated bytes of memory a record costs, beyond its strings and slots:
// its Dump entry, the Root and RootSlot it may become, and its node in the
// graph and in package heap's per-node arrays.
const (
	nodeCost     = 64
	rootCost     = int64(unsafe.Sizeof(Root{})) + nodeCost
	rootSlotCost = int64(unsafe.Sizeof(RootSlot{})) + 8
	mapEntryCost = 48 // a map entry with its share of buckets
	stringCost   = int64(unsafe.Sizeof("")) + mapEntryCost
	// A group with its end and lookup bucket, and the node of an object
	// that has a group of its own.
	groupCost = int64(unsafe.Sizeof(group{})+unsafe.Sizeof(entry{})) + 8 + 8 + nodeCost
)

// keepGroups counts the memory of the object groups added since the last
// call, for the records before the one at off: a group costs about a
// hundred bytes, which a run of objects of one size shares but a crafted
// dump can spend on every 17-byte object.
func (p *parser) keepGroups(off int64) error {
	n := len(p.idx.groups) - p.groups
	p.groups = len(p.idx.groups)
	return p.keep(int64(n)*groupCost, off)
}

// keep adds n bytes of estimated memory for the record at recOff and fails
// once the total passes the budget.
func (p *parser) keep(n int64, recOff int64) error {
	p.kept += n
	if p.kept > p.keptLimit {
		return p.r.errorf(recOff, "the records (goroutines, frames, roots, runs of objects...) would take more than %d bytes of memory, the limit for a %d-byte dump",
			p.keptLimit, p.r.size)
	}
	return nil
}

// sideLimit returns the budget for a file of size bytes.
func sideLimit(size int64) int64 {
	return sideBudgetBase + int64(min(sideBudgetPerByte*float64(size), 1<<62))
}
