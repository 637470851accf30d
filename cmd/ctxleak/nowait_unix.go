//go:build unix

package main

import "syscall"

// openNoWait opens a named pipe for writing without waiting for a reader;
// with none, the open fails with errNoReader.
const openNoWait = syscall.O_NONBLOCK

// errNoReader is the error of opening for writing, with openNoWait, a
// named pipe that no process has open for reading.
var errNoReader error = syscall.ENXIO
