// Package profiles reads pprof heap and goroutine profiles, from files or
// from the net/http/pprof endpoints of a running process, and says what
// stays in use, what grows against a base profile, and which goroutines
// still carry a request's labels.
//
// # Reading
//
// [Parse] reads one profile from bytes: gzipped or plain profile.proto, or the
// legacy text formats that "go tool pprof" reads (debug=1 heap and goroutine
// profiles, whose "#" comment lines name each address and whose "# labels:"
// lines carry goroutine labels; both are used here). A [Loader] reads a file
// or an http(s) URL. For a URL whose last path element is "heap" or "allocs"
// it adds gc=1, so the server runs a garbage collection first and the profile
// shows what is in use now; for "goroutine" it asks for the proto form, which
// carries pprof labels. Every error is an [*Error] whose message starts with
// the file name or URL.
//
// Inputs are untrusted. A Loader reads only regular files (a FIFO or a
// device is refused before it is opened), and reads files, downloads,
// standard input ([Loader.Read]) and gzip data in pieces up to
// [Loader.MaxBytes] (default [DefaultMaxBytes], 256 MiB), never growing a
// buffer by doubling. Before decoding, a scan that allocates nothing
// estimates what the decoded profile will take, and refuses one over
// [DecodeFactor] times MaxBytes ([LegacyDecodeFactor] for the text
// formats, whose parser is slow): a few bytes per sample decode to about
// 150. The text formats' sample lines, which their parser reads at about
// 200 ns a byte, are also capped by the input's size, so that parsing time
// stays linear in it ([LimitLegacyLines]: 2 MiB plus 1/32 of the input at
// the default MaxBytes). Past any cap the error is a [*LimitError].
// Within the caps, github.com/google/pprof/profile's parsers decode the
// profile, proto or text, and a panic in them becomes an error. Negative
// values and sums over [MaxTotal], which no real heap or goroutine profile
// has, are refused, so they cannot pass under a gate. Function and file names,
// label keys and values are escaped where they hold control characters or
// invalid UTF-8 (as Go escapes: "\x1b"), so no renderer prints them raw.
//
// # Allocation sites
//
// [AnalyzeHeap] adds up inuse_space and inuse_objects by allocation site: the
// first frame of a sample's stack (leaf first) that is not the runtime or an
// allocation helper (see [IsHelper]), so that memory
// allocated by make, append, bytes.Buffer or io.ReadAll is charged to the code
// that asked for it. A site is a function and line ([ByLine]) or a function
// ([ByFunction]); with [Options.FullStack] every distinct stack is a site of
// its own. A sample whose stack passes through a request path (by default
// [DefaultRequestPath]: net/http's connection and handler functions) is
// request-scoped: memory allocated while serving a request that is still in
// use. With a base profile each site also gets its growth.
//
// # Goroutines
//
// [AnalyzeGoroutines] groups the goroutines of goroutine profiles by the
// function they started in, where they wait, and their label keys. On Go 1.26
// the proto goroutine profile (and the debug=1 text) holds each goroutine's
// stack from the frame it is executing down to the function it started in;
// runtime.goexit is dropped, and the "created by" line (the go statement and
// the parent goroutine) exists only in the debug=2 text dump, which is not a
// profile. The bottom frame, the start function, is therefore what names the
// creation here: for a closure, its name says which function spawned it
// (main.handle.func1 is a closure in main.handle). Goroutines that carry one
// of the request label keys (by default [DefaultRequestLabels]) and are not
// themselves on a request path are captured request contexts: they outlived
// the request whose labels they inherited.
//
// [CompareGoroutines] compares a goroutine report with one of a base
// profile taken earlier from the same process: the groups, matched by start
// function and wait site whatever their labels, that gained goroutines. It
// is a goleak-style check for a running service that needs no pprof labels.
//
// # Gates
//
// [Gates] compares the reports with limits for CI: heap growth against the
// base, request-scoped bytes in use, captured request goroutines, and
// goroutines gained against a base goroutine profile.
//
// # Reports
//
// A [Report] gathers the heap and goroutine reports, the gates' outcomes,
// the inputs and the [Settings] they were made with, and renders itself:
// [Report.WriteText] for people (tables of the top sites and goroutine
// groups), [Report.WriteJSON] for programs (a document whose "schema" is
// [JSONSchema]), [Report.WriteGitHub] for GitHub Actions annotations and
// [Report.WriteMarkdown] for a step summary. Source positions are
// [binsym.Position] values, printed as "function (dir/file.go:line)".
// The package names no command-line flag: [Report.GateSetting] lets the
// caller say what set each gate.
package profiles
