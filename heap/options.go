package heap

import (
	"cmp"
	"regexp"
	"slices"

	"github.com/ctxleak/ctxleak/binsym"
)

// DefaultMinSize is the size from which Holders reports an object.
const DefaultMinSize = 1 << 20

// DefaultMaxPathSteps is the longest path a group shows: past it, the
// steps in the middle are left out and counted.
const DefaultMaxPathSteps = 64

// An Option changes what Analyze knows or what Holders reports. Options are
// values: pass any of them to Analyze, where the report's options become
// the defaults of Holders, or the report's to Holders.
type Option struct{ apply func(*options) }

// options is what the Options given set.
type options struct {
	globals  []binsym.Symbol // sorted by address
	minSize  uint64
	maxSteps int
	top      int
	focus    *regexp.Regexp
	// progress is OnProgress's function, nil for none.
	progress func(Progress)
	// statics names the values the linker allocated (static.go).
	statics *staticIndex
	// memoryLimit is MemoryLimit's, 0 for heapdump's default.
	memoryLimit int64
	// returnMemory is set by ReturnMemory.
	returnMemory bool
	// leaks is LeakedGoroutines', nil for none.
	leaks *Leaks
}

// newOptions applies opts to the defaults.
func newOptions(opts []Option) options {
	o := options{minSize: DefaultMinSize, maxSteps: DefaultMaxPathSteps, statics: &staticIndex{}}
	o.apply(opts)
	return o
}

// apply applies opts to o.
func (o *options) apply(opts []Option) {
	for _, opt := range opts {
		if opt.apply != nil {
			opt.apply(o)
		}
	}
	slices.SortFunc(o.globals, func(x, y binsym.Symbol) int { return cmp.Compare(x.Addr, y.Addr) })
}

// Globals names global variables that the executable's symbol table does
// not (it is stripped, as go run and go test build it): a program that
// dumps its own heap knows the addresses of its variables and can pass
// them, with their sizes, and their types (Symbol.Type), which type the
// paths from them when the executable has no DWARF. It is an option of
// Analyze.
func Globals(syms ...binsym.Symbol) Option {
	return Option{func(o *options) { o.globals = append(slices.Clip(o.globals), syms...) }}
}

// MinSize sets the smallest object, or the smallest amount a root's direct
// holding retains, that gets an entry of the report; 0 means
// DefaultMinSize.
func MinSize(bytes uint64) Option {
	return Option{func(o *options) {
		o.minSize = bytes
		if bytes == 0 {
			o.minSize = DefaultMinSize
		}
	}}
}

// MaxPathSteps sets the longest path a group shows, in steps (objects):
// a longer one keeps its first and last steps and counts those left out in
// between. 0 means DefaultMaxPathSteps; the least is 2.
func MaxPathSteps(n int) Option {
	return Option{func(o *options) {
		switch {
		case n <= 0:
			o.maxSteps = DefaultMaxPathSteps
		default:
			o.maxSteps = max(n, 2)
		}
	}}
}

// MemoryLimit sets the memory, in bytes, that reading the dump and its
// analysis may take: a dump whose records would need more is refused with
// a *heapdump.MemoryLimitError. 0 means heapdump.DefaultMemoryLimit of the
// dump's size (128 MiB plus 1.5 times it), which a dump of millions of
// tiny objects can pass. It is an option of Analyze.
func MemoryLimit(bytes int64) Option {
	return Option{func(o *options) { o.memoryLimit = max(bytes, 0) }}
}

// ReturnMemory has Analyze give the work memory of the dominator
// computation back to the system as soon as it is garbage, with a forced
// collection (runtime/debug.FreeOSMemory), for graphs of 2^18 objects and
// roots or more whose work memory is a quarter of the heap or more: a
// process that only analyses peaks lower (10M objects: 538 MB of resident
// memory rather than 578). It suits a command; a
// process with a heap of its own (a test, a service) would have its whole
// heap marked, which is why it is off by default. It is an option of
// Analyze.
func ReturnMemory() Option { return Option{func(o *options) { o.returnMemory = true }} }

// Top keeps the first n groups of the report; 0 keeps them all.
func Top(n int) Option { return Option{func(o *options) { o.top = n }} }

// Focus keeps the groups of the report whose holder, path or allocation
// site re matches; nil keeps them all.
func Focus(re *regexp.Regexp) Option { return Option{func(o *options) { o.focus = re }} }

// global returns the name and start of the symbol of o.globals that holds
// addr.
func (o *options) global(addr uint64) (string, uint64, bool) {
	s, ok := o.globalAt(addr)
	return s.Name, s.Addr, ok
}

// globalAt returns the symbol of o.globals that holds addr.
func (o *options) globalAt(addr uint64) (binsym.Symbol, bool) {
	i, _ := slices.BinarySearchFunc(o.globals, addr, func(s binsym.Symbol, a uint64) int { return cmp.Compare(s.Addr, a) })
	for _, j := range []int{i, i - 1} {
		if j >= 0 && j < len(o.globals) {
			s := o.globals[j]
			if addr >= s.Addr && addr < s.Addr+max(s.Size, 1) {
				return s, true
			}
		}
	}
	return binsym.Symbol{}, false
}
