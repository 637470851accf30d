//go:build !unix

package main

import "errors"

// openNoWait is 0 where named pipes are not files of the file system.
const openNoWait = 0

// errNoReader is never returned here.
var errNoReader = errors.New("no reader")
