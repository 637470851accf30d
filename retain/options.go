package retain

import "time"

// DefaultTimeout is how long AssertReleased and Released wait for tracked
// values to be freed unless [Timeout] says otherwise.
const DefaultTimeout = 2 * time.Second

// DumpDirEnv names the environment variable that sets the directory for heap
// dumps when no [DumpDir] option is given.
const DumpDirEnv = "CTXLEAK_DUMP_DIR"

// An Option changes how a Tracker checks and reports.
type Option interface {
	apply(*options)
}

type options struct {
	timeout time.Duration
	dumpDir string
	noDump  bool
	// checkGoroutines is set by CheckGoroutines.
	checkGoroutines bool
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// Timeout sets how long AssertReleased and Released keep collecting garbage
// and checking before they report what is still alive. The default is
// [DefaultTimeout]. A timeout of zero or less checks once, after one GC.
func Timeout(d time.Duration) Option {
	return optionFunc(func(o *options) { o.timeout = d })
}

// DumpDir sets the directory where heap dumps are written when tracked
// values are still alive. It is created (mode 0700) if missing. The default
// is $CTXLEAK_DUMP_DIR, else a new directory under os.TempDir.
func DumpDir(dir string) Option {
	return optionFunc(func(o *options) { o.dumpDir = dir })
}

// NoDump turns heap dumps off: a failure lists what is still alive, without
// saying who holds it.
func NoDump() Option {
	return optionFunc(func(o *options) { o.noDump = true })
}

// CheckGoroutines makes AssertReleased also fail the test when goroutines
// started since New are proven leaked: Go 1.27's goroutineleak profile
// (runtime/pprof) finds goroutines blocked for ever on channels or locks
// that nothing runnable can reach. The failure names each group of them
// (the function they block in, the wait, where they were created, their
// ids) and, unless NoDump, what they retain, from a heap dump taken just
// before the profile: a dump after it would kill the test binary. A check
// that passes deletes its dump; one that finds leaked goroutines is the
// last dump of the process, since the runtime dies dumping goroutines it
// marked leaked (later failures say so). Goroutines that were running at
// New are not counted against the test, but another parallel test's are.
// On a Go before 1.27 the option logs (with the TB's Logf, when it has
// one) that the profile is not available, and checks only the values.
//
// testing/synctest catches the same goroutines inside a bubble (a bubble
// whose goroutines are all blocked for ever deadlocks and fails), but not
// the memory: it says nothing of what they keep alive, nor of goroutines
// outside a bubble.
func CheckGoroutines() Option {
	return optionFunc(func(o *options) { o.checkGoroutines = true })
}

func buildOptions(opts []Option) options {
	o := options{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt.apply(&o)
	}
	return o
}
