package main

import (
	"runtime"
	"unsafe"
)

// Patterns of values held only by a frame's stack object (an address-taken
// local, which the runtime's stack maps leave out of the dump's frame
// slots):
//   - stackobj N: N goroutines in main.send, each blocked for ever in
//     `ch <- v` on a channel nobody receives from; v is a struct holding a
//     buffer of 4 KiB, used by nothing after the send;
//   - stackobj-clean N: the same goroutines sending a struct that holds no
//     buffer (the buffer was dropped before the send).
func init() {
	patterns["stackobj"] = func(n int, res *result) { sendPile(n, res, true) }
	patterns["stackobj-clean"] = func(n int, res *result) { sendPile(n, res, false) }
}

// sendValue is what main.send sends. With more than four fields it is not
// SSA-able: the send takes the address of v itself, not of a temporary
// copy, so v is the stack object and DWARF names it.
type sendValue struct {
	id      int
	buf     []byte
	a, b, c int
}

// stuck is never received from.
var stuck = make(chan sendValue)

// send blocks for ever in a send of a value holding a buffer of size bytes
// (none if size is 0). Nothing after the send uses v.
//
//go:noinline
func send(size int, addr chan<- uint64) {
	v := sendValue{id: size}
	if size > 0 {
		v.buf = make([]byte, size)
		addr <- uint64(uintptr(unsafe.Pointer(unsafe.SliceData(v.buf))))
	} else {
		addr <- 0
	}
	stuck <- v
}

func sendPile(n int, res *result, hold bool) {
	size := 0
	if hold {
		size = valueSize
	}
	addr := make(chan uint64)
	for range n {
		go send(size, addr)
		if a := <-addr; res.PayloadAddr == 0 {
			res.PayloadAddr = a
		}
	}
	waitBlocked("main.send", "[chan send", n)
	runtime.KeepAlive(stuck)
}
