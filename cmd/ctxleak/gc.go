package main

import (
	"os"
	"runtime/debug"
)

// dumpGCPercent is the collector's target heap growth while a command
// reads a heap dump, in percent.
const dumpGCPercent = 25

// tuneGCForDumps has the collector run at 25% heap growth rather than the
// default 100%, unless GOGC says otherwise. Reading a dump grows large
// arrays, and at the default target the garbage of their growth stays
// resident until the heap doubles: on a dump of 100,000 goroutines (600
// MB) peak RSS falls from 363 to 256 MB, at no CPU time measurable on a
// 1.5M-object dump, whose arrays hold few pointers.
func tuneGCForDumps() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(dumpGCPercent)
	}
}
