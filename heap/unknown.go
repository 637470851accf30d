package heap

import (
	"fmt"
	"strings"
)

// A Reason says which input a report lacks.
type Reason int

const (
	// NoBinary: no executable was given, so source lines, creation sites,
	// the names of globals and closures, and types are unknown.
	NoBinary Reason = iota + 1
	// BinaryIncomplete: the executable lacks part of what the report
	// uses (a symbol table, DWARF, line tables, a load bias); the
	// Unknown's Text says which part and what follows.
	BinaryIncomplete
	// PluginGlobals: the program loaded plugins, whose globals the dump
	// does not record: what only they hold is counted as dead.
	PluginGlobals
	// CleanupClosures: closures of runtime.AddCleanup are among the dead
	// objects; the dump does not list cleanups as roots, so what only a
	// cleanup's argument holds is counted as dead.
	CleanupClosures
)

var reasonNames = [...]string{NoBinary: "no_binary", BinaryIncomplete: "binary_incomplete", PluginGlobals: "plugin_globals", CleanupClosures: "cleanup_closures"}

// String returns the reason's name as JSON writes it: "no_binary",
// "binary_incomplete", "plugin_globals" or "cleanup_closures".
func (r Reason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// MarshalText writes the reason's String.
func (r Reason) MarshalText() ([]byte, error) {
	if r <= 0 || int(r) >= len(reasonNames) {
		return nil, fmt.Errorf("heap: invalid Reason %d", int(r))
	}
	return []byte(r.String()), nil
}

// An Unknown is one thing a report cannot tell for want of an input.
type Unknown struct {
	Reason Reason `json:"reason"`
	// Text says in one sentence what is missing and, after a colon, what
	// is unknown for want of it.
	Text string `json:"text"`
}

// String returns u.Text.
func (u Unknown) String() string { return u.Text }

// withInput returns u.Text with input, the caller's name for what is
// missing (a command-line flag, say), in parentheses after the first clause:
// "no executable given (--binary): source lines ...". An empty input leaves
// the text as it is.
func (u Unknown) withInput(input string) string {
	if input == "" {
		return u.Text
	}
	missing, rest, ok := strings.Cut(u.Text, ": ")
	if !ok {
		return u.Text + " (" + input + ")"
	}
	return missing + " (" + input + "): " + rest
}

// noBinary is what a report says when it was given no executable.
var noBinary = Unknown{Reason: NoBinary,
	Text: "no executable given: source lines, creation sites, names of globals and closures, and types are unknown"}

// unknowns types the sentences of binsym.Binary.Missing.
func unknowns(missing []string) []Unknown {
	out := make([]Unknown, len(missing))
	for i, m := range missing {
		out[i] = Unknown{Reason: BinaryIncomplete, Text: m}
	}
	return out
}
