package heapdump

import (
	"fmt"
	"unsafe"

	"github.com/ctxleak/ctxleak/internal/bytesize"
)

// Every record but the objects' contents is kept in memory (Dump), most of
// them become root nodes of the graph, every object a node and every
// pointer an edge, and the caller (package heap) keeps arrays of its own
// per node and per edge (Options.NodeBytes, EdgeBytes). A crafted dump can
// make records tiny (an other-root record takes 3 bytes, its Root,
// RootSlot and node over 200; an object in a run 17 bytes, its node and
// the analysis's arrays about 50), so the parser counts what the whole run
// will cost and refuses a dump past a budget that grows with the file:
// memory stays bounded by the bytes the file holds (its size less the
// holes of a sparse file, which read as zeros and make no costly record)
// whatever the records say. Real
// dumps stay below it: their frames carry contents, their strings repeat,
// their objects hold more than a word.

// sideBudgetBase and sideBudgetPerByte set the budget: base plus perByte
// times the file size. Dumps of 20,000 goroutines 50 frames deep, or
// 100,000 goroutines, need about 1.4 times their size; 10M objects of 80
// bytes about 0.6 times. Tests lower them.
var (
	sideBudgetBase    int64 = 128 << 20
	sideBudgetPerByte       = 1.5
)

// Estimated bytes of memory a record costs, beyond its strings and slots:
// its Dump entry, the Root and RootSlot it may become, and its node in the
// graph and in package heap's per-node arrays.
const (
	// graphNodeCost and graphEdgeCost are the graph's own arrays: an
	// object's start index and its edge count while reading; an edge's
	// node ID (the raw pointers are compacted in place, or read as 8
	// bytes each first: graphEdgeCost64).
	graphNodeCost   = 4 + 1
	graphEdgeCost   = 4
	graphEdgeCost64 = 8 + 4
	// nodeCost and edgeCost bound the memory of a root node and of a root
	// slot's edge, the caller's arrays included (package heap's test
	// checks that its own fit).
	nodeCost     = 64
	edgeCost     = 24
	rootCost     = int64(unsafe.Sizeof(Root{})) + nodeCost
	rootSlotCost = int64(unsafe.Sizeof(RootSlot{})) + edgeCost
	mapEntryCost = 48 // a map entry with its share of buckets
	stringCost   = int64(unsafe.Sizeof("")) + mapEntryCost
	// A group with its end and lookup bucket (its objects' nodes count
	// apart, in perNode).
	groupCost = int64(unsafe.Sizeof(group{})+unsafe.Sizeof(entry{})) + 8 + 8
)

// keepGroups counts the memory of the object groups added since the last
// call, for the records before the one at off, and checks the budget with
// the objects and edges read so far: a group costs about a hundred bytes,
// which a run of objects of one size shares but a crafted dump can spend
// on every 17-byte object.
func (p *parser) keepGroups(off int64) error {
	n := len(p.idx.groups) - p.groups
	p.groups = len(p.idx.groups)
	return p.keep(int64(n)*groupCost, off)
}

// keep adds n bytes of estimated memory for the record at recOff and fails
// once the total, with the objects' nodes and edges, passes the budget.
func (p *parser) keep(n int64, recOff int64) error {
	p.kept += n
	if total := p.total(); total > p.keptLimit {
		return &MemoryLimitError{Path: p.r.path, Offset: recOff, Limit: p.keptLimit, Size: p.r.size, Held: p.held}
	}
	return nil
}

// DefaultMemoryLimit returns the memory budget of a dump that holds size
// bytes when Options.MemoryLimit is 0: 128 MiB plus 1.5 times that (a
// sparse file's holes hold nothing).
func DefaultMemoryLimit(size int64) int64 { return sideLimit(size) }

// MemoryLimitError says that the records read up to Offset would, with the
// analysis, take more memory than Limit (Options.MemoryLimit, or
// DefaultMemoryLimit(Size) for a dump of Size bytes).
type MemoryLimitError struct {
	Path   string
	Offset int64
	Limit  int64
	Size   int64
	// Held is the bytes the file holds, less than Size in a sparse file
	// (its holes count for nothing); 0 means Size.
	Held int64
}

// Default returns the budget of the dump when no limit is given:
// DefaultMemoryLimit of the bytes it holds.
func (e *MemoryLimitError) Default() int64 {
	if e.Held > 0 && e.Held < e.Size {
		return DefaultMemoryLimit(e.Held)
	}
	return DefaultMemoryLimit(e.Size)
}

func (e *MemoryLimitError) Error() string {
	what := "a " + bytesize.Format(e.Size) + " dump"
	if e.Held > 0 && e.Held < e.Size {
		what += " holding " + bytesize.Format(e.Held) + ", the rest holes"
	}
	which := "the limit for a dump of its size"
	if e.Limit != e.Default() {
		which = "the limit given"
	}
	return fmt.Sprintf("%s: offset %d: the records (objects and pointers, goroutines, frames, roots...) would take more than %s of memory with the analysis, %s (%s)",
		e.Path, e.Offset, bytesize.Format(e.Limit), which, what)
}

// total returns the estimated memory of the whole run for what has been
// read: the records kept, and a node per object and an edge per pointer
// with what the caller keeps for them.
func (p *parser) total() int64 {
	edges := int64(len(p.edges32)) * p.perEdge
	if n := int64(len(p.edges64)); n > 0 {
		edges += n * (p.perEdge - graphEdgeCost + graphEdgeCost64)
	}
	return p.kept + int64(p.idx.n)*p.perNode + edges
}

// sideLimit returns the budget for a file of size bytes.
func sideLimit(size int64) int64 {
	return sideBudgetBase + int64(min(sideBudgetPerByte*float64(size), 1<<62))
}
