package retain

import "runtime"

// EnableAllocSites makes the runtime record the allocation stack of every
// object (runtime.MemProfileRate = 1), so that heap dumps, and the reports
// made from them, can say where a retained object was allocated. Without it
// only objects the memory profiler happened to sample (about one per 512 KiB
// allocated) have a site.
//
// Call it before the allocations you want to see, first thing in TestMain:
// objects allocated before the call keep no site.
//
//	func TestMain(m *testing.M) {
//		retain.EnableAllocSites()
//		os.Exit(m.Run())
//	}
//
// Small allocations get about 35 times slower: use it in tests, never in
// production.
func EnableAllocSites() {
	runtime.MemProfileRate = 1
}
