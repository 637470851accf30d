package main

// Patterns of typing.go: memory held through statics, containers,
// finalizers and interior pointers, whose paths must come out typed.
//   - static N: a value the linker allocated statically (var x = &T{}),
//     named through the global main.defaultStore that points to it, holding
//     N buffers of 4 KiB; static-iface N: the same behind an interface
//     (main.defaultSink), as net/http.DefaultTransport is; static-moved
//     N: static, then main.defaultStore set to another value;
//   - pool N: N items of 4 KiB in the sync.Pool main.bufPool, put by one P
//     (the last in its shared queue, address last_buf);
//   - syncmap N: N items of 4 KiB in the sync.Map main.sessions, keyed by
//     their number plus 1,000;
//   - finalizer-cycle N: N items of 4 KiB, each with a finalizer, each
//     on a cycle (item -> peer -> item): unreachable, yet never freed;
//   - finalizer N: the same without the cycle, held by main.kept;
//   - interior N: N goroutines in main.holdField, each holding a pointer to
//     the field state of a conn that holds a buffer of 4 KiB;
//   - intmap N: N items of 4 KiB in the map main.byID, item i under the key
//     i+5,000;
//   - typing-clean N: the same containers and goroutines, let go of before
//     the dump: N items put in main.bufPool and two GCs; N items stored in
//     main.sessions and deleted; N goroutines in main.dropField, which no
//     longer use their pointer into a conn.

import (
	"runtime"
	"sync"
	"unsafe"
)

// itemSize is the size of each item's buffer.
const itemSize = 4 << 10

// item is what the containers hold.
type item struct {
	id  int
	buf []byte
}

// store is allocated by the linker: var defaultStore = &store{...}.
type store struct {
	name  string
	mu    sync.Mutex
	items []*item
}

var defaultStore = &store{name: "default"}

// sink is the interface main.defaultSink has.
type sink interface{ put(*item) }

// fileSink is the value behind main.defaultSink.
type fileSink struct {
	path    string
	pending []*item
}

func (s *fileSink) put(it *item) { s.pending = append(s.pending, it) }

var defaultSink sink = &fileSink{path: "/dev/null"}

var bufPool = sync.Pool{New: func() any { return new(item) }}

var sessions sync.Map

var byID = map[int64]*item{}

// finalized has a finalizer; peer makes a cycle through it.
type finalized struct {
	peer *peer
	id   int
	buf  []byte
}

// peer points back to a finalized. (A finalized pointing to itself does
// not keep itself alive in Go 1.26.)
type peer struct{ back *finalized }

var kept []*finalized

// conn is a small object a goroutine points into.
type conn struct {
	id    int
	buf   []byte
	state connState
}

// connState is the field of conn a goroutine holds a pointer to.
type connState struct {
	n     int
	ready bool
}

// holdField holds a pointer into the middle of a conn across the block.
//
//go:noinline
func holdField(st *connState, ready chan<- struct{}) {
	ready <- struct{}{}
	<-release
	st.n++
}

// dropField holds a pointer into a conn that it no longer uses once it
// blocks: the stack maps say it is dead.
//
//go:noinline
func dropField(st *connState, ready chan<- struct{}) {
	st.n++
	ready <- struct{}{}
	<-release
}

func newItem(i int) *item { return &item{id: i, buf: make([]byte, itemSize)} }

func init() {
	patterns["static"] = func(n int, res *result) {
		for i := range n {
			defaultStore.items = append(defaultStore.items, newItem(i))
		}
		addr(res, "store", unsafe.Pointer(defaultStore))
	}
	patterns["static-moved"] = func(n int, res *result) {
		for i := range n {
			defaultStore.items = append(defaultStore.items, newItem(i))
		}
		addr(res, "store", unsafe.Pointer(defaultStore))
		defaultStore = &store{name: "other"} // the static stays, unnamed
	}
	patterns["static-iface"] = func(n int, res *result) {
		for i := range n {
			defaultSink.put(newItem(i))
		}
		addr(res, "sink", unsafe.Pointer(defaultSink.(*fileSink)))
	}
	patterns["pool"] = func(n int, res *result) {
		// One P: the first item goes to its private slot, the others to
		// its shared queue, in the order they were put.
		runtime.GOMAXPROCS(1)
		for i := range n {
			it := newItem(i)
			bufPool.Put(it)
			addr(res, "last_buf", unsafe.Pointer(unsafe.SliceData(it.buf)))
		}
		// The dump follows a GC, which moves the pool's items to its victim
		// cache; they stay there until the next one.
	}
	patterns["syncmap"] = func(n int, res *result) {
		for i := range n {
			sessions.Store(i+1000, newItem(i)) // keys past 255 are boxed on the heap
		}
	}
	patterns["finalizer-cycle"] = func(n int, res *result) {
		for i := range n {
			f := &finalized{id: i, buf: make([]byte, itemSize)}
			f.peer = &peer{back: f}
			runtime.SetFinalizer(f, func(*finalized) {})
		}
		runtime.GC()
		runtime.GC()
	}
	patterns["finalizer"] = func(n int, res *result) {
		for i := range n {
			f := &finalized{id: i, buf: make([]byte, itemSize)}
			runtime.SetFinalizer(f, func(*finalized) {})
			kept = append(kept, f)
		}
	}
	patterns["intmap"] = func(n int, res *result) {
		for i := range n {
			byID[int64(i)+5000] = newItem(i)
		}
	}
	patterns["typing-clean"] = func(n int, res *result) {
		for i := range n {
			bufPool.Put(newItem(i))
			sessions.Store(i, newItem(i))
		}
		for i := range n {
			sessions.Delete(i)
		}
		runtime.GC() // the pool's items go to its victim cache
		runtime.GC() // and are dropped
		ready := make(chan struct{})
		for i := range n {
			c := &conn{id: i, buf: make([]byte, itemSize)}
			go dropField(&c.state, ready)
			<-ready
		}
		waitParked("main.dropField", n)
	}
	patterns["interior"] = func(n int, res *result) {
		ready := make(chan struct{})
		for i := range n {
			c := &conn{id: i, buf: make([]byte, itemSize)}
			go holdField(&c.state, ready)
			<-ready
		}
		waitParked("main.holdField", n)
	}
}

// addr notes the address of p in res under name.
func addr(res *result, name string, p unsafe.Pointer) {
	if res.Addrs == nil {
		res.Addrs = map[string]uint64{}
	}
	res.Addrs[name] = uint64(uintptr(p))
}
