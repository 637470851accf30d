package profiles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ctxleak/ctxleak/internal/inputfile"
)

// DefaultTimeout is how long a Loader waits for a URL's whole answer.
const DefaultTimeout = 30 * time.Second

// ProgressMinBytes is the file size from which a Loader reports progress
// for files; URLs always report it.
const ProgressMinBytes = 50 << 20

// Progress is one report of a Loader's progress on one source.
type Progress struct {
	Source string
	// Phase is "download", "read", "decompress" or "parse".
	Phase string
	// Done is the number of bytes handled so far in this phase; Total is
	// the number expected, or 0 when unknown.
	Done, Total int64
}

// Loader reads profiles from files and from http(s) URLs.
type Loader struct {
	// Client fetches URLs; nil means a client with Timeout.
	Client *http.Client
	// Timeout bounds the fetch of one URL, from the request to the last
	// byte; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxBytes bounds a profile's size, compressed or not; 0 means
	// DefaultMaxBytes; more than MaxMaxBytes means MaxMaxBytes. Decoding
	// the profiles a Loader reads may take DecodeFactor times as much
	// memory in all; a profile that would take more is refused too. Use a
	// Loader for one run: one that reads without end refuses in the end.
	MaxBytes int64
	// Progress, if set, is called as a URL, or a file of ProgressMinBytes
	// or more, is read, decompressed and parsed.
	Progress func(Progress)

	// decoded is the memory that decoding the profiles read so far takes:
	// they share the DecodeFactor × MaxBytes cap, so that many profiles
	// given at once cannot take many times the memory of one.
	decoded atomic.Int64
}

// IsURL reports whether source is an http or https URL rather than a file.
func IsURL(source string) bool {
	return strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://")
}

// ErrDeltaProfile is the error of a URL that asks for a delta profile
// (seconds=N): it holds differences, not what is in use. A caller can name
// its own way of comparing two profiles when it sees it (errors.Is).
var ErrDeltaProfile = errors.New("seconds= asks for a delta profile, which holds differences, not what is in use")

// FetchURL returns the URL a Loader fetches for source, and the kind of
// profile its path names ("" if the path does not say). A path whose last
// element is "heap" or "allocs" gets gc=1 unless it has a gc parameter, so
// the profile reflects a fresh garbage collection. A goroutine URL must
// not ask for debug=2, the text dump, which is not a profile. Delta
// profiles (seconds=N) are refused: they hold differences, not what is in
// use.
func FetchURL(source string) (string, Kind, error) {
	u, err := url.Parse(source)
	if err != nil || u.Host == "" {
		return "", "", sourceErrorf(source, "not a valid URL")
	}
	q := u.Query()
	var kind Kind
	switch path.Base(u.Path) {
	case "heap", "allocs":
		kind = Heap
		if !q.Has("gc") {
			q.Set("gc", "1")
		}
	case "goroutine", "goroutineleak":
		kind = Kind(path.Base(u.Path))
		if d := q.Get("debug"); d != "" && d != "0" && d != "1" {
			return "", "", sourceErrorf(source, "debug=%s asks for a text dump, not a profile: drop debug= to get the proto profile, which carries labels", d)
		}
	}
	if q.Has("seconds") {
		return "", "", &Error{Source: source, Err: fmt.Errorf("%w: fetch the profile twice and compare the two", ErrDeltaProfile)}
	}
	u.RawQuery = q.Encode()
	return u.String(), kind, nil
}

// Load reads one profile from a file or an http(s) URL.
func (l *Loader) Load(ctx context.Context, source string) (*Profile, error) {
	var (
		data []byte
		err  error
	)
	maxBytes := l.maxBytes()
	report := l.reporter(source)
	if IsURL(source) {
		data, err = l.fetch(ctx, source, report)
	} else {
		data, err = readFile(source, maxBytes, report)
	}
	if err != nil {
		return nil, err
	}
	if report != nil && !IsURL(source) && int64(len(data)) < ProgressMinBytes {
		report = nil
	}
	return parse(source, data, maxBytes, report, &l.decoded)
}

// Read reads one profile from r, as Load reads a file, within the same
// limits: source names it in errors. A context that ends stops nothing
// here; close r to stop a read.
func (l *Loader) Read(source string, r io.Reader) (*Profile, error) {
	r, err := peekHead(source, r, false)
	if err != nil {
		return nil, err
	}
	maxBytes := l.maxBytes()
	data, err := ReadLimited(r, "input", maxBytes, 0)
	if err != nil {
		return nil, &Error{Source: source, Err: err}
	}
	return parse(source, data, maxBytes, nil, &l.decoded)
}

func (l *Loader) maxBytes() int64 {
	if l.MaxBytes > 0 {
		return min(l.MaxBytes, MaxMaxBytes)
	}
	return DefaultMaxBytes
}

func (l *Loader) reporter(source string) func(phase string, done, total int64) {
	if l.Progress == nil {
		return nil
	}
	return func(phase string, done, total int64) {
		l.Progress(Progress{Source: source, Phase: phase, Done: done, Total: total})
	}
}

func readFile(name string, maxBytes int64, report func(string, int64, int64)) ([]byte, error) {
	// Stat before opening: opening a FIFO blocks until a writer comes, and
	// a device such as /dev/zero never ends.
	if st, err := os.Stat(name); err != nil {
		return nil, &Error{Source: name, Err: plainPathError(err)}
	} else if err := checkRegular(name, st); err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, &Error{Source: name, Err: plainPathError(err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{Source: name, Err: plainPathError(err)}
	}
	if err := checkRegular(name, st); err != nil {
		return nil, err
	}
	// The kind of input first, then its size: a heap dump of any size is
	// one.
	head := make([]byte, len(heapDumpHeader))
	n, _ := f.ReadAt(head, 0)
	if err := checkHead(name, head[:n], false); err != nil {
		return nil, err
	}
	size := st.Size()
	if size > maxBytes {
		return nil, &Error{Source: name, Err: &LimitError{Limit: LimitSize, What: "file", Size: size, Max: maxBytes, Factor: 1, MaxBytes: maxBytes}}
	}
	var r io.Reader = f
	if report != nil && size >= ProgressMinBytes {
		r = &countingReader{r: r, phase: "read", total: size, progress: report}
	}
	// The size from Stat is only a hint: the file may change under us, and
	// ReadLimited bounds what is read.
	data, err := ReadLimited(r, "file", maxBytes, size)
	if err != nil {
		return nil, &Error{Source: name, Err: plainPathError(err)}
	}
	return data, nil
}

// checkRegular refuses directories, devices, FIFOs and sockets.
func checkRegular(name string, st os.FileInfo) error {
	switch {
	case st.IsDir():
		return sourceErrorf(name, "is a directory, not a profile")
	case !st.Mode().IsRegular():
		return sourceErrorf(name, "is %s, not a regular file: save the profile to a file, or pipe it to \"-\"", inputfile.Kind(st.Mode()))
	}
	return nil
}

// plainPathError drops the operation and path from an *os.PathError: the
// message already starts with the file name.
func plainPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fetch GETs a profile URL.
func (l *Loader) fetch(ctx context.Context, source string, report func(string, int64, int64)) ([]byte, error) {
	target, _, err := FetchURL(source)
	if err != nil {
		return nil, err
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	client := l.Client
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, sourceErrorf(source, "not a valid URL: %v", err)
	}
	if report != nil {
		report("download", 0, 0)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, &Error{Source: source, Err: describeFetchError(err, timeout)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("HTTP %s", resp.Status)
		if resp.StatusCode == http.StatusNotFound {
			msg += " (is net/http/pprof registered at this path?)"
		}
		return nil, sourceErrorf(source, "%s", msg)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
		return nil, sourceErrorf(source, "an HTML page (Content-Type text/html), not a profile: give the profile's own path, such as /debug/pprof/heap")
	}
	r, err := peekHead(source, resp.Body, false)
	if err != nil {
		return nil, err
	}
	maxBytes := l.maxBytes()
	if resp.ContentLength > maxBytes {
		return nil, &Error{Source: source, Err: &LimitError{Limit: LimitSize, What: "download", Size: resp.ContentLength, Max: maxBytes, Factor: 1, MaxBytes: maxBytes}}
	}
	if report != nil {
		r = &countingReader{r: r, phase: "download", total: max(resp.ContentLength, 0), progress: report}
	}
	// Content-Length is the server's word: the buffer grows as bytes come.
	data, err := ReadLimited(r, "download", maxBytes, min(max(resp.ContentLength, 0), untrustedHint))
	var re *readError
	if errors.As(err, &re) {
		return nil, &Error{Source: source, Err: fmt.Errorf("reading the answer at byte %d: %w", re.at, describeFetchError(re.err, timeout))}
	}
	if err != nil {
		return nil, &Error{Source: source, Err: err}
	}
	return data, nil
}

// describeFetchError turns the errors of an HTTP fetch into short
// messages that say what happened.
func describeFetchError(err error, timeout time.Duration) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("no complete answer within %v (timed out)", timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return errors.New("connection refused: is the server running, and listening on this address?")
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("cannot resolve host %q: %v", dnsErr.Name, dnsErr.Err)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return fmt.Errorf("cannot reach the server: %v", opErr.Err)
	}
	return err
}
