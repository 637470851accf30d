package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// withoutDWARF writes to dst a copy of the executable src whose DWARF no
// reader finds: the names of its .debug_* and .zdebug_* sections are
// renamed in the section header string table (".nodbg_info"), as if it had
// been linked with -w, with every address, symbol and byte of code and
// data as they were, so that it is still the executable that wrote src's
// dumps. It fails the test unless src had DWARF and dst has none.
func withoutDWARF(t *testing.T, src, dst string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if _, err := f.DWARF(); err != nil {
		t.Fatalf("%s has no DWARF to strip: %v", src, err)
	}
	strtab := f.Section(".shstrtab")
	if strtab == nil || strtab.Offset+strtab.Size > uint64(len(b)) {
		t.Fatalf("%s: no section name table", src)
	}
	names := b[strtab.Offset : strtab.Offset+strtab.Size]
	for _, prefix := range []string{".debug_", ".zdebug_"} {
		renamed := strings.Replace(prefix, "debug_", "nodbg_", 1)
		copy(names, bytes.ReplaceAll(names, []byte("\x00"+prefix), []byte("\x00"+renamed)))
	}
	if err := os.WriteFile(dst, b, 0o700); err != nil {
		t.Fatal(err)
	}
	g, err := elf.Open(dst)
	if err != nil {
		t.Fatalf("%s: %v", dst, err)
	}
	defer g.Close()
	for _, s := range g.Sections {
		if strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			t.Fatalf("%s still has section %s", dst, s.Name)
		}
	}
	if _, err := g.DWARF(); err == nil {
		t.Fatalf("%s still has DWARF", dst)
	}
	return dst
}

// sameNamesWithoutDWARF runs "ctxleak holders DUMP --format json" with
// args, once with exe, which has DWARF, and once with stripped, the same
// executable without it (withoutDWARF), and fails unless the reports agree
// (sameOrLessKnown): a type is named alike whatever the binary carries.
func sameNamesWithoutDWARF(t *testing.T, dump, exe, stripped string, args ...string) {
	t.Helper()
	var reports [2]map[string]any
	for i, bin := range []string{exe, stripped} {
		code, stdout, stderr := ctxleak(t, append([]string{"holders", dump, "--binary", bin, "--format", "json"}, args...)...)
		if code != 0 && code != 1 {
			t.Fatalf("holders --binary %s: exit %d: %s", bin, code, stderr)
		}
		if err := json.Unmarshal([]byte(stdout), &reports[i]); err != nil {
			t.Fatalf("holders --binary %s: %v", bin, err)
		}
	}
	full, less := reports[0], reports[1]
	if len(full["unknown"].([]any)) >= len(less["unknown"].([]any)) {
		t.Errorf("without DWARF, the report lists no more unknowns: %v", less["unknown"])
	}
	delete(full, "unknown")
	delete(less, "unknown")
	delete(full, "binary")
	delete(less, "binary")
	for _, d := range sameOrLessKnown("", full, less, nil) {
		t.Error("without DWARF: " + d)
	}
}

// offsetVia matches the Via of a step whose field only DWARF names: an
// offset in the object that points to it ("+16", "local at +64").
var offsetVia = regexp.MustCompile(`(^|\s)\+\d+($|\s)`)

// sameOrLessKnown returns where the JSON value less, from a report made
// without DWARF, differs from full, made with it, other than by knowing
// less: a step's type may be unknown ("" or "?") where DWARF names it, and
// then its via anything; a via may be an offset where DWARF names the
// field, and a map entry's key unknown; an untyped step may have no
// allocation site, and untyped "made of" rows only need the same totals. A type named otherwise, or any other difference, is reported.
func sameOrLessKnown(at string, full, less any, diffs []string) []string {
	switch f := full.(type) {
	case map[string]any:
		l, ok := less.(map[string]any)
		if !ok {
			return append(diffs, fmt.Sprintf("%s: %v, want %v", at, less, full))
		}
		lessType, _ := l["type"].(string)
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range f {
				if !yield(k) {
					return
				}
			}
			for k := range l {
				if _, dup := f[k]; !dup && !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			switch lv, _ := l[k].(string); {
			case k == "type" && (lv == "" || lv == "?"):
			case k == "key" && l[k] == nil: // a map entry's key, which only DWARF may type
			case k == "via" && (lessType == "" || lessType == "?" || offsetVia.MatchString(lv)):
			case k == "alloc_site" && l[k] == nil && (lessType == "" || lessType == "?"):
				// "made at" is said of the context types a step names
			case k == "made_of" && untypedRows(l[k]):
				// Rows of an unknown type stay apart: the same totals
				diffs = sameOrLessKnown(at+".made_of (total)", madeOfTotal(f[k]), madeOfTotal(l[k]), diffs)
			default:
				diffs = sameOrLessKnown(at+"."+k, f[k], l[k], diffs)
			}
		}
		return diffs
	case []any:
		l, ok := less.([]any)
		if !ok || len(l) != len(f) {
			return append(diffs, fmt.Sprintf("%s: %v, want %v", at, less, full))
		}
		for i := range f {
			diffs = sameOrLessKnown(fmt.Sprintf("%s[%d]", at, i), f[i], l[i], diffs)
		}
		return diffs
	}
	if fmt.Sprint(full) != fmt.Sprint(less) {
		return append(diffs, fmt.Sprintf("%s: %v, want %v", at, less, full))
	}
	return diffs
}

// untypedRows reports whether the JSON rows of a "made of" list include
// one of an unknown type.
func untypedRows(rows any) bool {
	l, _ := rows.([]any)
	for _, r := range l {
		if m, _ := r.(map[string]any); m != nil && (m["type"] == "" || m["type"] == "?") {
			return true
		}
	}
	return false
}

// madeOfTotal returns the bytes and objects the rows of a "made of" list
// add up to.
func madeOfTotal(rows any) [2]float64 {
	var sum [2]float64
	l, _ := rows.([]any)
	for _, r := range l {
		m, _ := r.(map[string]any)
		b, _ := m["bytes"].(float64)
		n, _ := m["object_count"].(float64)
		sum[0], sum[1] = sum[0]+b, sum[1]+n
	}
	return sum
}

// TestHoldersWithoutDWARF runs "ctxleak holders" on the dump of every
// pattern of heap/testdata/holders (the catalogue's mechanisms: goroutines,
// globals, timers, AfterFunc, pprof labels, an HTTP request) with the
// program as go build links it, DWARF kept, and with a copy of it without
// DWARF, as go run and go test link: the reports name every type alike.
func TestHoldersWithoutDWARF(t *testing.T) {
	t.Parallel()
	var stripped string
	var once sync.Once
	for _, pattern := range []string{
		"goroutine", "without-cancel", "blocked-sender", "dead-ctx", "lost-cancel", "timeout", "afterfunc",
		"timer-closure", "global-cache", "guarded-cache", "pprof-label", "http-request", "nested", "three-uploads",
	} {
		t.Run(pattern, func(t *testing.T) {
			t.Parallel()
			dump, exe := holdersDump(t, pattern)
			once.Do(func() { stripped = withoutDWARF(t, exe, exe+"-nodwarf") })
			if stripped == "" {
				t.Fatal("no copy without DWARF")
			}
			sameNamesWithoutDWARF(t, dump, exe, stripped, "--min-size", "64KiB")
		})
	}
}
