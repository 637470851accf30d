package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile starts writing a CPU profile of this run to path (mode
// 0600, replaced if it exists), for --cpuprofile: a slow dump can then be
// looked at with go tool pprof. stopCPUProfile ends it.
func (a *app) startCPUProfile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return usageErrorf("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return usageErrorf("--cpuprofile %s: %v", path, err)
	}
	a.cpuProfile = f
	return nil
}

// stopCPUProfile ends the CPU profile, if one is being written, and
// closes its file.
func (a *app) stopCPUProfile() error {
	if a.cpuProfile == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := a.cpuProfile.Close()
	a.cpuProfile = nil
	if err != nil {
		return usageErrorf("--cpuprofile: %v", err)
	}
	fmt.Fprintf(a.stderr, "ctxleak: CPU profile written to %s\n", a.cpuProfilePath)
	return nil
}
