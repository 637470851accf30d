// Package retain makes a test fail when a tracked value outlives its request.
//
// Track the values a request should free, run the code, then assert that
// they are gone:
//
//	func TestUpload(t *testing.T) {
//		tr := retain.New(t)
//		body := make([]byte, 50<<20)
//		tr.Track(body, "request body")
//		handle(ctx, body)
//		tr.AssertReleased()
//	}
//
// AssertReleased runs the garbage collector and checks again with back-off
// until every tracked value is freed (it returns at the first moment they
// all are) or the timeout passes (2 s by default, see [Timeout]). If
// something is still alive it writes a heap dump of the process, analyses
// it with the heap package and fails the test with, for each value still
// alive, who holds it:
//
//	"upload body" []uint8 of 50.0 MiB retains 50.0 MiB
//	    tracked at upload/upload_test.go:20
//	    allocated at example.com/shop/upload.TestHandleReleasesBody (upload/upload_test.go:19)
//	    held by goroutine 24 [chan receive], frame example.com/shop/upload.audit (upload/upload.go:23)
//	    created at example.com/shop/upload.Handle (upload/upload.go:18); the frame retains 50.0 MiB in 4 objects
//	    |- argument -> context.valueCtx       48 B  retains 50.0 MiB in 4 objects
//	    |- .val -> []uint8                    24 B  retains 50.0 MiB in 2 objects
//	    `- []uint8                        50.0 MiB
//
// The holder is a goroutine's frame (the function whose variable or
// argument holds the value, its goroutine and where that goroutine was
// created), a global variable, or a timer (the func it will run and where
// it was created); the path is the chain of typed references from the
// holder to the value. The report ends with where the dump was kept and the
// `ctxleak holders` command that shows everything else it retains.
//
// # Names of globals
//
// `go test` links the test binary without a symbol table (-s -w), so
// globals have no names in it. When a report needs one, the package
// rebuilds the test binary once per process with `go test -c` (same
// package, same recorded build flags such as -race and -tags; about 1 s
// with a warm build cache), checks that its sections are at the running
// binary's addresses and that its data and bss pointer masks equal those
// in the dump, and takes the names of globals from it. If the go command
// is missing or the rebuilt binary differs, globals are named by address
// and a note says why; `go test -o FILE` builds a test binary that keeps
// its symbols.
//
// # How values are tracked
//
// Track keeps a weak pointer ([weak.Pointer]) to the heap object behind the
// value: the pointed-to value for a pointer, the backing array of a slice,
// the bytes of a string, the runtime's header of a map or channel, the
// closure of a func. The tracker holds no strong reference and so never
// keeps a value alive itself. A weak pointer reads nil as soon as the GC has
// found its object unreachable, so the check does not depend on cleanup or
// finalizer goroutines running in time; the back-off gives goroutines,
// cleanups and finalizers that free a value later the time to run. A value
// with a finalizer (runtime.SetFinalizer) counts as freed once its finalizer
// is queued, even if the finalizer then stores it again. An interior pointer (to a field or an
// element) tracks the whole allocation that contains it.
//
// # What cannot be tracked
//
// Track refuses, with an error that says why, values that the runtime can
// never report as freed, instead of failing later with a false leak:
//   - nil pointers, slices, maps, channels and funcs, and empty strings;
//   - zero-size values, which all share one address;
//   - pointer-free values under 16 bytes (a *int64, a 10-byte string): the
//     tiny allocator packs several of them into one 16-byte block, which is
//     freed only when all of them are. A value is taken to be tiny when its
//     type has no pointers and its size (the pointed-to type, cap*elem for a
//     slice, len for a string) is under 16 bytes; a small field of a larger
//     allocation is refused too, track the allocation instead;
//   - memory outside the Go heap: globals, values the linker allocated
//     (var p = &T{...} at package level), string literals, functions and
//     closures that capture nothing (read-only data). These are told apart
//     by [runtime.AddCleanup], which ignores globals and rejects read-only
//     data; the probe is stopped at once;
//   - values that are not references (a struct or an int): pass a pointer;
//   - unsafe.Pointer, whose type and so whose allocation are unknown.
//
// Stack memory cannot be tracked by mistake: the value handed to Track
// escapes, so the compiler puts it on the heap.
//
// When a Tracker was made by [New], a refusal also fails the test (with
// Errorf, so Track may be called from any goroutine); the returned error is
// for programs that use [NewTracker], and can be ignored in tests.
//
// # Heap dumps
//
// A failure writes a heap dump ([runtime/debug.WriteHeapDump]) with mode
// 0600: it holds every byte of the process, secrets included. The dump goes
// to the directory given by [DumpDir], else to $CTXLEAK_DUMP_DIR, else to a
// new directory under [os.TempDir] named after the test, which is kept after
// the test ends (t.TempDir would be removed with the failed test). A copy (a
// hard link where possible) of the running binary is kept next to it, since
// `go test` deletes its test binary on exit and the dump alone has no symbol
// names. Existing files are never overwritten. [NoDump] turns dumps off.
// On Go 1.27 and later, once a goroutineleak profile (runtime/pprof) has
// marked goroutines of the process leaked, a heap dump would kill the test
// binary: the failure then says why it has no dump instead.
//
// Writing a dump stops the world for about 0.3 s per 100 MiB of heap and the
// file is larger than the heap. Dumps are written one at a time. A whole
// failure (GC, dump, analysis) takes about 0.5 s with 100 MiB of heap.
//
// # Parallel tests
//
// Each Tracker checks and explains only the values tracked through it, so
// tests that call t.Parallel do not see each other's values in their
// failures, and each failing Tracker writes its own dump file. What is shared: the garbage collector (every check runs
// a process-wide GC, which slows the other tests while it runs) and the
// process, so a dump holds the whole heap, other tests' objects included,
// and a value that another parallel test still holds counts as alive: that
// test is a real holder. A value tracked by two Trackers is judged by each.
// Failures write and analyse their dumps one at a time, each after a GC, so
// a dump never holds another failure's analysis (a parsed dump is several
// times the heap it describes): eight failing at once wait for each other.
//
// Inside a testing/synctest bubble the back-off and the timeout run on the
// bubble's fake clock, so the wait takes no real time once the bubble is
// idle. The verdicts on the patterns in this package's tests are the same as
// outside; but a value freed only by something outside the bubble (a
// cleanup or finalizer, which run outside it, or another goroutine) may be
// reported alive, and a bubble timer shorter than the timeout fires during
// the wait.
//
// # Leaked goroutines
//
// With [CheckGoroutines] (Go 1.27 and later), AssertReleased also fails the
// test when goroutines started since New are proven leaked by the
// goroutineleak profile of runtime/pprof: blocked for ever on a channel or
// lock that nothing runnable can reach. It takes one heap dump first, then
// the profile (the other order kills the test binary), and names each group
// of leaked goroutines with what their frames alone retain in the dump:
//
//	retain: 5 goroutines started during the test proven leaked by the goroutineleak profile (...)
//	  they retain 80.0 KiB in the heap dump taken just before the profile
//
//	5 goroutines in example.com/shop/upload.audit.func1 [chan send]
//	    created by example.com/shop/upload.audit at upload/upload.go:30
//	    goroutine ids 23, 24, 25, 26, 27
//	    retain 80.0 KiB (what their own frames alone keep alive)
//
// A profile that finds leaked goroutines ends the heap dumps of the test
// binary: later failures say why they have none. testing/synctest catches
// goroutines blocked for ever inside a bubble (the bubble deadlocks), but
// not what they keep alive, nor goroutines outside a bubble.
//
// # Allocation sites
//
// Heap dumps link objects to the stack that allocated them only for objects
// the memory profiler sampled. Call [EnableAllocSites] first thing in
// TestMain to sample every allocation: failures then say where each value
// and each timer was allocated.
package retain
