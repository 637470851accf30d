package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"time"
	"weak"

	"github.com/ctxleak/ctxleak/internal/procmem"
	"github.com/ctxleak/ctxleak/internal/selfdump"
)

// Env is what a running scenario sees: the payload size and task count,
// payload allocation with tracking, and phase boundaries.
type Env struct {
	// PayloadBytes is the payload size (the total, for scenarios that split it).
	PayloadBytes int64
	// Tasks is the number of background tasks or requests to start.
	Tasks int

	scenario *Scenario
	opts     Options
	start    time.Time
	mu       sync.Mutex // guards tracked and total: handlers track concurrently
	tracked  []weak.Pointer[byte]
	total    int64 // bytes of all tracked payloads
	base     sample
	attempt  int // 0 on the first attempt; see maxAttempts
	result   *Result
	err      error // first measurement error; stops the run
}

// sample is one reading of the process's memory.
type sample struct {
	heap int64 // live heap objects, bytes
	rss  int64 // resident set size, bytes
}

// Run executes s in the current process with o and returns what it
// measured. It changes process-wide settings for the measurement to mean
// something: it turns the automatic GC off (debug.SetGCPercent(-1), and no
// memory limit), so that the only GC cycles are the ones counted at phase
// boundaries (a release is never hidden in a background cycle), and records
// every allocation in the heap profile (runtime.MemProfileRate = 1). It is
// meant to run in a child process of its own ("ctxleak __scenario").
//
// The returned Result is not judged: call s.Judge on it.
func Run(s *Scenario, o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	runtime.MemProfileRate = 1
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(math.MaxInt64) // a GOMEMLIMIT would start cycles of its own

	env := &Env{
		PayloadBytes: o.PayloadBytes,
		Tasks:        o.Tasks,
		scenario:     s,
		opts:         o,
		start:        time.Now(),
		result:       &Result{Name: s.Name},
	}
	if err := env.baseline(); err != nil {
		return nil, err
	}
	var runErr error
	for {
		runErr = s.Run(env)
		if !errors.Is(runErr, errTooSlow) || env.attempt+1 >= maxAttempts || env.err != nil {
			break
		}
		env.restart()
	}
	if env.err != nil {
		return nil, env.err
	}
	if errors.Is(runErr, errTooSlow) {
		return nil, fmt.Errorf("scenario %s: %w, %d times, the last with a %v timer: the machine is too busy",
			s.Name, runErr, maxAttempts, env.timerDelay())
	}
	if runErr != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, runErr)
	}
	if got, want := len(env.result.Phases), len(s.Phases); got != want {
		return nil, fmt.Errorf("scenario %s reached %d of its %d phases", s.Name, got, want)
	}
	r := env.result
	r.PayloadBytes = env.total
	r.Payloads = env.payloads()
	r.Attempts = env.attempt + 1
	r.PeakRSSBytes, _ = procmem.Status("VmHWM")
	if o.KeepDir != "" {
		r.ProfileDir = o.KeepDir
	}
	if o.DumpDir != "" {
		r.Globals = append(globals(), s.Globals...)
	}
	return r, nil
}

// maxAttempts bounds how often a scenario whose timer fired before its
// measurements finished is started again, each time with twice the delay.
const maxAttempts = 4

// timerDelay is the delay the timer scenarios use on this attempt.
func (e *Env) timerDelay() time.Duration { return timerDelay << e.attempt }

// restart prepares e for another attempt of the scenario: it waits (with GC
// cycles) for the last attempt's payloads to be released, then forgets them
// and the phases measured.
func (e *Env) restart() {
	e.settle(e.opts.maxGCCycles())
	e.mu.Lock()
	e.tracked, e.total = nil, 0
	e.mu.Unlock()
	e.result.Phases = nil
	e.attempt++
}

// Payload allocates the scenario's payload (PayloadBytes), fills it so that
// its pages are resident, and tracks it. The Env keeps only a weak pointer.
func (e *Env) Payload() []byte { return e.PayloadOf(e.PayloadBytes) }

// PayloadOf allocates and tracks a payload of n bytes, for scenarios that
// track several (one per request). n must be at least 16 (smaller
// pointer-free objects share tiny blocks and are never released alone).
func (e *Env) PayloadOf(n int64) []byte {
	if n < 16 {
		panic(fmt.Sprintf("scenarios: payload of %d bytes is too small to track", n))
	}
	b := allocPayload(n)
	e.track(b)
	return b
}

// track starts tracking b, a payload allocated by allocPayload.
func (e *Env) track(b []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tracked = append(e.tracked, weak.Make(&b[0]))
	e.total += int64(len(b))
}

// allocPayload is the payload's allocation site: heap profiles are searched
// for it by name (payloadSite), so it must not be inlined.
//
//go:noinline
func allocPayload(n int64) []byte {
	b := make([]byte, n)
	fill(b)
	return b
}

// payloadSite is the function name allocPayload has in profiles.
const payloadSite = "github.com/ctxleak/ctxleak/scenarios.allocPayload"

// fill writes a pattern over b so that every page is touched (and resident)
// and the payload looks like data rather than zeros.
func fill(b []byte) {
	if len(b) == 0 {
		return
	}
	const pattern = "ctxleak payload: a large request body kept in a context.\n"
	n := copy(b, pattern)
	for n < len(b) {
		n += copy(b[n:], b[:n])
	}
}

// payloads counts the tracked payloads.
func (e *Env) payloads() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.tracked)
}

// alive counts the tracked payloads that are still reachable.
func (e *Env) alive() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, w := range e.tracked {
		if w.Value() != nil {
			n++
		}
	}
	return n
}

// settle runs GC cycles until no tracked payload is alive, at most max
// cycles and at least one, and returns the cycles run and the live count.
// Weak pointers are cleared by the cycle that finds their object
// unreachable, and runtime.GC returns after the sweep, so one cycle is
// enough to see a release; sync.Pool needs two (the victim cache).
func (e *Env) settle(max int) (runs, alive int) {
	for runs < max {
		runtime.GC()
		runs++
		if alive = e.alive(); alive == 0 {
			break
		}
	}
	return runs, alive
}

// baseline measures the process before any payload exists.
func (e *Env) baseline() error {
	e.settle(2)
	heap, err := liveHeapBytes()
	if err != nil {
		return err
	}
	if _, _, err := e.profile("00-baseline"); err != nil {
		return err
	}
	debug.FreeOSMemory()
	rss, err := readRSS()
	if err != nil {
		return err
	}
	e.base = sample{heap: heap, rss: rss}
	return nil
}

// Phase marks the boundary name: it runs the GC until the state settles and
// records the measurements. Call it at each boundary listed in the
// scenario's Phases, in order, from the goroutine whose state the phase
// describes (typically the request handler, or the code after it).
func (e *Env) Phase(name string) {
	if e.err != nil {
		return
	}
	i := len(e.result.Phases)
	if i >= len(e.scenario.Phases) || e.scenario.Phases[i].Name != name {
		e.err = fmt.Errorf("scenario %s: phase %d is %q, not the one declared", e.scenario.Name, i+1, name)
		return
	}
	elapsed := time.Since(e.start)
	// Payloads not yet collected, reachable or not: weak pointers are
	// cleared only by the GC cycle that finds their object unreachable.
	before := e.alive()
	runs, alive := e.settle(e.opts.maxGCCycles())
	p := PhaseResult{
		Name:           name,
		Alive:          alive > 0,
		AlivePayloads:  alive,
		SettleGCCycles: runs,
		ElapsedMillis:  elapsed.Milliseconds(),
	}
	if before > 0 && alive == 0 {
		p.GCCycles = runs
	}

	heap, err := liveHeapBytes()
	if err != nil {
		e.err = err
		return
	}
	p.HeapDeltaBytes = heap - e.base.heap
	if n := int64(e.payloads()); n > 1 {
		per := p.HeapDeltaBytes / n
		p.PerPayloadHeapBytes = &per
	}
	file := e.fileName(i, name)
	p.SiteBytes, p.Profile, err = e.profile(file)
	if err != nil {
		e.err = err
		return
	}
	if e.opts.DumpDir != "" && alive > 0 {
		p.PayloadAddrs = e.payloadAddrs()
		start := time.Now()
		switch p.Dump, err = e.dump(file); {
		case errors.Is(err, selfdump.ErrLeakedGoroutines):
			// An earlier leak profile forbids it: the holder is unknown.
			p.HolderError = err.Error()
		case err != nil:
			e.err = err
			return
		}
		p.DumpMillis = time.Since(start).Milliseconds()
	}
	if e.opts.PhaseHook != nil {
		p.Holder = e.opts.PhaseHook(name, p.Alive)
	}
	// The leak profile comes after the dump: it would forbid it.
	if err := e.leakProfile(i, file, &p); err != nil {
		e.err = err
		return
	}
	// Return freed pages to the OS, so that RSS shows what the process
	// holds rather than what the runtime has not yet given back. This runs
	// one more GC cycle, after the state was recorded.
	debug.FreeOSMemory()
	rss, err := readRSS()
	if err != nil {
		e.err = err
		return
	}
	p.RSSDeltaBytes = rss - e.base.rss
	e.result.Phases = append(e.result.Phases, p)
}

// fileName names the profile and heap dump files of phase i: its number
// and name, and the attempt when the scenario was started again.
func (e *Env) fileName(i int, name string) string {
	s := fmt.Sprintf("%02d-%s", i+1, name)
	if e.attempt > 0 {
		s += fmt.Sprintf(".attempt%d", e.attempt+1)
	}
	return s
}

// profile takes a heap profile snapshot, returns the bytes in use at the
// payload's allocation site and, when profiles are kept, writes it to
// KeepDir/name.pb.gz (mode 0600, never overwriting) and returns that path.
func (e *Env) profile(name string) (site int64, path string, err error) {
	site = inuseAt(payloadSite)
	if e.opts.KeepDir == "" {
		return site, "", nil
	}
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		return 0, "", fmt.Errorf("heap profile: %w", err)
	}
	path = filepath.Join(e.opts.KeepDir, name+".pb.gz")
	if err := writeNew(path, buf.Bytes()); err != nil {
		return 0, "", err
	}
	return site, path, nil
}

// writeNew creates path with mode 0600 and writes data; it fails if the
// file exists.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	return errors.Join(werr, cerr)
}
