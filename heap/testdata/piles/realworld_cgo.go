//go:build pilesreal && cgo

package main

// The pattern rw-cgo, built with the tag pilesreal when cgo is on (the
// program is then a cgo program): N goroutines in
// main.cgoWait, each parked in a C call that blocks (a read of a pipe
// nobody writes to), holding a request context across it.

/*
#include <unistd.h>
static int blockOn(int fd) { char b; return (int)read(fd, &b, 1); }
*/
import "C"

import (
	"context"
	"os"
)

func init() {
	patterns["rw-cgo"] = func(n int, _ *result) {
		r, w, err := os.Pipe()
		if err != nil {
			panic(err)
		}
		cgoPipe = [2]*os.File{r, w}
		goN(n, "main.cgoWait", "[syscall", func(ctx context.Context, ready chan<- struct{}) { cgoWait(ctx, int(r.Fd()), ready) })
	}
}

// cgoPipe keeps the pipe open.
var cgoPipe [2]*os.File

// cgoWait holds ctx across a C call that never returns before the dump.
//
//go:noinline
func cgoWait(ctx context.Context, fd int, ready chan<- struct{}) {
	ready <- struct{}{}
	C.blockOn(C.int(fd))
	used(ctx)
}
