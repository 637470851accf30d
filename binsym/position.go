package binsym

import (
	"path"
	"strconv"
)

// Position is a place in the source: a function and the file and line it is
// at. It is the one source position type of ctxleak: heap reports, pprof
// profile reports and the executable's line tables all use it. File is the
// full path as the compiler recorded it, or "" when unknown; Line is 0 when
// only the function is known.
type Position struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

// String formats p as "function (dir/file.go:line)", with the last two
// elements of the file's path, or as the function alone when the file is
// unknown.
func (p Position) String() string {
	if p.File == "" {
		return p.Function
	}
	return p.Function + " (" + p.FileLine() + ")"
}

// FileLine formats where p is as "dir/file.go:line" (the last two elements of
// the file's path; no ":line" when Line is 0), or "" when the file is unknown.
func (p Position) FileLine() string {
	if p.File == "" {
		return ""
	}
	s := ShortFile(p.File)
	if p.Line > 0 {
		s += ":" + strconv.Itoa(p.Line)
	}
	return s
}

// ShortFile keeps the last two elements of a slash-separated file path:
// "/src/net/http/server.go" becomes "http/server.go".
func ShortFile(file string) string {
	dir, base := path.Split(file)
	if dir == "" {
		return base
	}
	return path.Join(path.Base(dir), base)
}
