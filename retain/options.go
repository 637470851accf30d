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

func buildOptions(opts []Option) options {
	o := options{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt.apply(&o)
	}
	return o
}
