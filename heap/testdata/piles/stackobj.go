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
//     buffer;
//   - stackobj-temp N: N goroutines in main.sendPair, blocked in the send
//     of a small struct holding a 4 KiB buffer, which the compiler copies
//     to an unnamed temporary (the stack object) before the send; and N
//     in main.selectPair, blocked in a select that sends such a struct.
func init() {
	patterns["stackobj"] = func(n int, res *result) { sendPile(n, res, "main.send", send, valueSize) }
	patterns["stackobj-clean"] = func(n int, res *result) { sendPile(n, res, "main.send", send, 0) }
	patterns["stackobj-temp"] = func(n int, res *result) {
		sendPile(n, res, "main.sendPair", sendPair, valueSize)
		sendPile(n, res, "main.selectPair", selectPair, valueSize)
	}
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

// pair is small enough for registers: sending one copies it to a
// temporary first.
type pair struct {
	id  int
	buf []byte
}

var stuckPair = make(chan pair)

// sendPair is send with a pair.
//
//go:noinline
func sendPair(size int, addr chan<- uint64) {
	v := pair{id: size, buf: make([]byte, size)}
	addr <- uint64(uintptr(unsafe.Pointer(unsafe.SliceData(v.buf))))
	stuckPair <- v
}

var never = make(chan int)

// selectPair is sendPair in a select.
//
//go:noinline
func selectPair(size int, addr chan<- uint64) {
	v := pair{id: size, buf: make([]byte, size)}
	addr <- uint64(uintptr(unsafe.Pointer(unsafe.SliceData(v.buf))))
	select {
	case stuckPair <- v:
	case <-never:
	}
}

func sendPile(n int, res *result, name string, fn func(int, chan<- uint64), size int) {
	addr := make(chan uint64)
	for range n {
		go fn(size, addr)
		if a := <-addr; res.PayloadAddr == 0 {
			res.PayloadAddr = a
		}
	}
	state := "[chan send"
	if name == "main.selectPair" {
		state = "[select"
	}
	waitBlocked(name, state, n)
	runtime.KeepAlive(stuck)
	runtime.KeepAlive(stuckPair)
}
