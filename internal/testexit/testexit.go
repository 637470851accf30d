// Package testexit ends a test binary without the race detector's sleep.
//
// A binary built with -race sleeps a second before it exits with status 0
// (GORACE's atexit_sleep_ms, default 1000), so that other threads can still
// report races. In a test binary that second is spent after testing.M.Run
// has already failed the run for any race seen during it or after the tests
// ("race detected outside of test execution"), so it finds nothing more and
// only makes every package's tests a second slower. Exit skips it; every
// TestMain of this module ends with Exit(m.Run()).
package testexit

import (
	"os"
	"syscall"
)

// Exit ends the process with code: as os.Exit does, except that with the
// race detector on and code 0 it exits at once, without the race
// detector's final sleep (and without os.Exit's exit hooks, which a test
// binary of this module does not use).
func Exit(code int) {
	if raceEnabled && code == 0 {
		syscall.Exit(0)
	}
	os.Exit(code)
}
