package heapdump

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/ctxleak/ctxleak/binsym"
)

// Dump holds every record of a heap dump except the objects, which the
// Graph indexes without keeping their contents. Field names follow the
// writer, src/runtime/heapdump.go.
type Dump struct {
	Params           Params
	Types            map[uint64]Type   // type records by type address
	Itabs            map[uint64]uint64 // itab address -> type address
	Goroutines       []Goroutine       // in dump order
	Frames           []Frame           // every goroutine's frames, goroutine by goroutine, innermost first
	Defers           []Defer
	Panics           []Panic
	Threads          []Thread
	Segments         []Segment // the data and bss segments of the first module
	Finalizers       []Finalizer
	QueuedFinalizers []Finalizer
	OtherRoots       []OtherRoot
	MemStats         *runtime.MemStats // nil if the dump has no memstats record
	Buckets          []Bucket          // memory profile buckets, in dump order

	funcs []string // the frames' function names (FrameFunc)
	// waitReasons are the goroutines' wait reasons (WaitReason).
	waitReasons []string
	slots       []Slot // every frame's slots, frame by frame (FrameSlots)
	// withSlots counts the frames with slots, as they are read.
	withSlots int
}

// Params is the params record: how the dumping process laid out memory.
type Params struct {
	BigEndian   bool
	PtrSize     int    // 4 or 8
	ArenaStart  uint64 // lowest heap arena address
	ArenaEnd    uint64 // end of the highest heap arena
	GOARCH      string
	GoVersion   string   // runtime.Version() of the process, e.g. "go1.26.8"
	Experiments []string // GOEXPERIMENT flags named in the version ("X:..."), if any
	NCPU        int      // number of CPUs at startup
}

// minFrameSize returns the architecture's minimum frame size: the offset of
// a callee's arguments from its caller's stack pointer (internal/goarch).
func (p *Params) minFrameSize() uint64 {
	switch p.GOARCH {
	case "arm", "mips", "mipsle":
		return 4
	case "arm64", "loong64", "mips64", "mips64le", "riscv64", "s390x":
		return 8
	case "ppc64", "ppc64le":
		return 32
	}
	return 0 // amd64, 386, wasm
}

func parseVersion(v string) (version string, experiments []string) {
	version, x, ok := strings.Cut(v, " X:")
	if ok {
		experiments = strings.Split(x, ",")
	}
	return version, experiments
}

// Type is a type record. The runtime writes one only for types that appear
// in an itab, and names of unnamed pointer types come out truncated.
type Type struct {
	Addr uint64
	Size uint64
	Name string
	// DataPointer is the runtime's flag for the data word of an interface
	// holding this type: true if it is a pointer (the type is stored
	// indirectly, or is pointer-shaped and has pointers).
	DataPointer bool
}

// GStatus is a goroutine status as the runtime numbers it.
type GStatus uint64

// String returns the runtime's name for the status, without the leading _G.
func (s GStatus) String() string {
	names := [...]string{"idle", "runnable", "running", "syscall", "waiting", "moribund", "dead",
		"enqueue", "copystack", "preempted", "leaked", "deadextra"}
	base := s &^ 0x1000
	if base < GStatus(len(names)) {
		if s&0x1000 != 0 {
			return "scan" + names[base]
		}
		return names[base]
	}
	return "status(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// Goroutine is a goroutine record. It holds no pointers, so that the
// collector need not scan 100,000 of them: its wait reason is the Dump's
// (Dump.WaitReason).
type Goroutine struct {
	Addr       uint64 // address of the runtime.g
	SP         uint64 // saved stack pointer
	ID         uint64 // goroutine id
	GoPC       uint64 // PC of the go statement that created it
	Status     GStatus
	System     bool   // a runtime goroutine
	waitReason uint32 // 1 plus its index in Dump.waitReasons, or 0
	WaitSince  uint64 // runtime nanotime when it started waiting, or 0
	Ctxt       uint64 // sched.ctxt: the closure of a goroutine that has not started
	M          uint64 // address of the runtime.m running it, or 0
	Defer      uint64 // address of the innermost _defer, or 0
	Panic      uint64 // address of the innermost _panic, or 0
	FirstFrame int    // index of its innermost frame in Dump.Frames
	NumFrames  int
}

// WaitReason returns the wait reason of Goroutines[i], such as "chan
// receive", or "" if it is not waiting.
func (d *Dump) WaitReason(i int) string { return oneBased(d.waitReasons, d.Goroutines[i].waitReason) }

// Frame is a stack frame record.
type Frame struct {
	Goroutine int    // index in Dump.Goroutines
	Depth     int    // 0 for the innermost frame
	SP        uint64 // lowest address of the frame
	ChildSP   uint64 // SP of the callee frame, or 0 for the innermost
	Size      uint64 // bytes from SP to the frame pointer
	Entry     uint64 // entry PC of the function
	PC        uint64 // current PC (a return address except in the innermost frame)
	ContPC    uint64 // PC where execution continues

	// A frame holds no pointers, so that the collector need not scan the
	// frames of 100,000 goroutines: its function name and slots are
	// indexes into the Dump (Dump.FrameFunc, Dump.FrameSlots).
	fn         uint32 // index in Dump.funcs
	slotsStart uint32 // Dump.slots[slotsStart:slotsEnd]
	slotsEnd   uint32
	contents   int64 // file offset of the frame's contents
}

// FrameFunc returns the function name of Frames[i].
func (d *Dump) FrameFunc(i int) string { return d.funcs[d.Frames[i].fn] }

// FrameFuncID returns a number for the function of Frames[i]: frames of
// one function have the same, frames of two different ones differ. It
// tells functions apart without comparing their names.
func (d *Dump) FrameFuncID(i int) uint32 { return d.Frames[i].fn }

// FrameSlots returns the pointer slots the runtime wrote for Frames[i],
// from its stack maps: the outargs area (arguments of the callee, which
// belong to the frame at Depth-1) and the live pointer locals. Values may
// be anything a pointer-typed slot holds: heap addresses, itab or type
// words of interfaces, globals. The caller must not modify them.
//
// The type or itab word of an interface is never a pointer slot (the
// compiler's stack maps leave it out, as the heap bitmaps do): read it
// with Graph.FrameContents at the data word's offset minus a word.
func (d *Dump) FrameSlots(i int) []Slot {
	f := &d.Frames[i]
	return d.slots[f.slotsStart:f.slotsEnd:f.slotsEnd]
}

// Slot is a pointer slot in a frame or segment: its offset and the word in it.
type Slot struct {
	Offset uint64
	Value  uint64
}

// Defer is a defer record.
type Defer struct {
	Addr, G, SP, PC uint64
	Fn              uint64 // the funcval, or 0 for an open-coded defer
	FnPC            uint64 // its code pointer
	Link            uint64 // next defer
}

// Panic is a panic record.
type Panic struct {
	Addr, G uint64
	Type    uint64 // type word of the panic value
	Data    uint64 // data word of the panic value
	Link    uint64 // next panic
}

// Thread is an OS thread record (a runtime.m).
type Thread struct {
	Addr   uint64 // address of the runtime.m
	ID     uint64 // m id
	ProcID uint64 // OS thread id
}

// SegmentKind says which global segment a Segment is.
type SegmentKind uint8

const (
	SegmentData SegmentKind = iota + 1 // initialised globals
	SegmentBSS                         // zeroed globals
)

func (k SegmentKind) String() string {
	if k == SegmentData {
		return "data"
	}
	return "bss"
}

// Segment is a data or bss record: the segment's bytes and pointer slots.
type Segment struct {
	Kind       SegmentKind
	Addr       uint64
	Size       uint64
	Contents   Contents // its Size bytes, in the file
	PtrOffsets []uint64 // offsets of pointer slots, ascending
	values     []uint64 // the words in the pointer slots
}

// Finalizer is a finalizer or queued finalizer record.
type Finalizer struct {
	Object  uint64 // the object the finalizer is set on
	Fn      uint64 // the finalizer's funcval
	FnPC    uint64 // its code pointer
	ArgType uint64 // type of the finalizer's argument
	ObjType uint64 // pointer type of the object
}

// OtherRoot is an "other root" record.
type OtherRoot struct {
	Desc string
	Addr uint64
}

// Bucket is a memory profile bucket: an allocation stack with its counts.
type Bucket struct {
	Addr   uint64 // bucket address, the key of alloc samples
	Size   uint64 // allocation size
	Allocs uint64
	Frees  uint64
	Stack  []binsym.Position // innermost first
}
