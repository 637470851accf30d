package profiles

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ctxleak/ctxleak/internal/allochelper"
)

// Granularity says what an allocation site is.
type Granularity string

// The granularities of allocation sites.
const (
	ByLine     Granularity = "line"     // a function and a line (the default)
	ByFunction Granularity = "function" // a function
)

// IsHelper reports whether function is the runtime or one of the functions
// that allocate on behalf of their caller (make, append, bytes.Buffer,
// io.ReadAll, fmt.Sprintf, context.With*, ...), so that the caller, not
// they, is the allocation site. Type parameters of generic functions are
// ignored when matching.
func IsHelper(function string) bool { return allochelper.Is(function) }

// DefaultRequestPath matches the functions through which a net/http
// server runs a request: the HTTP/1 connection loop, HandlerFunc, and the
// HTTP/2 handler goroutines (bundled in net/http, and in x/net/http2).
var DefaultRequestPath = regexp.MustCompile(`^(?:` + strings.Join([]string{
	regexp.QuoteMeta("net/http.(*conn).serve"),
	regexp.QuoteMeta("net/http.HandlerFunc.ServeHTTP"),
	regexp.QuoteMeta("net/http.(*http2serverConn).runHandler"),
	regexp.QuoteMeta("golang.org/x/net/http2.(*serverConn).runHandler"),
}, "|") + `)$`)

// DefaultRequestLabels are the pprof label keys that mark a goroutine as
// working for a request.
var DefaultRequestLabels = []string{"request_id"}

// Options say how to analyze profiles. The zero value uses the defaults.
type Options struct {
	// By chooses what an allocation site is; "" means ByLine.
	By Granularity
	// FullStack makes every distinct stack a site (or goroutine group) of
	// its own, and reports the stacks.
	FullStack bool
	// Focus keeps only samples with a frame whose function or file matches.
	Focus *regexp.Regexp
	// Ignore drops samples with a frame whose function or file matches.
	Ignore *regexp.Regexp
	// Helper reports whether a function allocates on behalf of its caller;
	// nil means IsHelper.
	Helper func(function string) bool
	// Request matches the functions of a request path; nil means
	// DefaultRequestPath.
	Request *regexp.Regexp
	// RequestLabels are the label keys of request goroutines; nil means
	// DefaultRequestLabels.
	RequestLabels []string
	// LabelValues reports the values of goroutine labels, not only their
	// keys. Values may be sensitive (user or tenant identifiers).
	LabelValues bool
	// Requests is the number of requests served between the base profile
	// and the profile; when positive, growth is also given per request.
	Requests int64
}

func (o Options) by() Granularity {
	if o.By == "" {
		return ByLine
	}
	return o.By
}

func (o Options) helper() func(string) bool {
	if o.Helper != nil {
		return o.Helper
	}
	return IsHelper
}

func (o Options) request() *regexp.Regexp {
	if o.Request != nil {
		return o.Request
	}
	return DefaultRequestPath
}

func (o Options) requestLabels() []string {
	if o.RequestLabels != nil {
		return o.RequestLabels
	}
	return DefaultRequestLabels
}

// PatternError is an expression given to MatchAny that does not compile.
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string { return fmt.Sprintf("%q: %v", e.Pattern, e.Err) }

// Unwrap returns the compiler's error.
func (e *PatternError) Unwrap() error { return e.Err }

// MatchAny compiles regular expressions into one that matches what any of
// them matches, for Options.Focus, Ignore and Request. Empty expressions
// are left out; none gives nil. An expression that does not compile is a
// *PatternError.
func MatchAny(exprs ...string) (*regexp.Regexp, error) {
	var alts []string
	for _, e := range exprs {
		if e == "" {
			continue
		}
		if _, err := regexp.Compile(e); err != nil {
			return nil, &PatternError{Pattern: e, Err: err}
		}
		alts = append(alts, "(?:"+e+")")
	}
	if len(alts) == 0 {
		return nil, nil
	}
	return regexp.MustCompile(strings.Join(alts, "|")), nil
}
