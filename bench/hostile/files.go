package main

import (
	"os"
	"path/filepath"
	"strings"
)

// fileCases give inputs that are not regular files, or whose names are
// hostile, to every file argument and flag.
func fileCases(a *assets) ([]Case, error) {
	d := filepath.Join(a.dir, "files")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, err
	}
	fifo, err := mkfifo(d, "fifo")
	if err != nil {
		return nil, err
	}
	links := map[string]string{}
	for _, t := range []string{"/dev/zero", "/dev/urandom", fifo, d, "/nonexistent", "loop"} {
		name := "link-to" + strings.ReplaceAll(t, "/", "-")
		if t == "loop" {
			name = "loop"
		}
		p := filepath.Join(d, name)
		os.Remove(p)
		if err := os.Symlink(t, p); err != nil {
			return nil, err
		}
		links[name] = p
	}
	evilName := filepath.Join(d, "evil\x1b[31m\n::error::forged\u202e.heapdump")
	if err := os.WriteFile(evilName, []byte("not a dump"), 0o600); err != nil {
		return nil, err
	}
	unreadable := filepath.Join(d, "unreadable.heapdump")
	if err := os.WriteFile(unreadable, []byte("go1.7 heap dump\n"), 0o000); err != nil && !os.IsPermission(err) {
		return nil, err
	}
	any := []int{0, 1, 2}
	inputs := map[string]string{
		"dir": d, "fifo": fifo, "dev-zero": "/dev/zero", "dev-urandom": "/dev/urandom", "dev-null": "/dev/null",
		"dev-full": "/dev/full", "proc-self-mem": "/proc/self/mem", "proc-kmsg-like": "/proc/self/status",
		"missing": filepath.Join(d, "missing"), "evil-name": evilName, "unreadable": unreadable, "empty-name": "",
		"dev-stdin": "/dev/stdin", "dev-tty": "/dev/tty",
	}
	for k, v := range links {
		inputs[k] = v
	}
	var cases []Case
	for name, p := range inputs {
		cases = append(cases,
			Case{Cat: "file", Name: "holders-" + name, Args: []string{"holders", p}, Want: any, Kind: otherKind},
			Case{Cat: "file", Name: "binary-" + name, Args: []string{"holders", a.dump, "--binary", p}, Want: any, Kind: holdersKind, Input: size(a.dump)},
			Case{Cat: "file", Name: "analyze-" + name, Args: []string{"analyze", p}, Want: any, Kind: otherKind},
			Case{Cat: "file", Name: "analyze-base-" + name, Args: []string{"analyze", a.dump, "--base", p}, Want: any, Kind: otherKind},
		)
	}
	// Standard input as the dump: endless zeros and random bytes, the
	// dump itself.
	for _, in := range []string{"/dev/zero", "/dev/urandom", "/dev/null", a.dump} {
		cases = append(cases, Case{Cat: "file", Name: "holders-stdin" + strings.ReplaceAll(filepath.Base(in), ".", "-"), Args: []string{"holders", "-", "--binary", a.exe},
			Stdin: in, Want: any, Kind: holdersKind, Input: size(in)})
	}
	cases = append(cases, Case{Cat: "file", Name: "holders-stdin-binary-stdin", Args: []string{"holders", "-", "--binary", "-"}, Stdin: a.dump, Want: any, Kind: holdersKind, Input: size(a.dump)})
	// URLs for the dump.
	for _, u := range []string{"endless", "redirect", "evil", "bomb", "dump", "nothing"} {
		cases = append(cases, Case{Cat: "file", Name: "holders-url-" + u, Args: []string{"holders", a.url + "/" + u, "--binary", a.exe, "--max-dump-size", "64MiB", "--http-timeout", "5s"},
			Want: any, Kind: holdersKind, Input: 64 << 20, Wait: 5})
	}
	cases = append(cases, Case{Cat: "file", Name: "holders-url-endless-default", Args: []string{"holders", a.url + "/endless", "--http-timeout", "3s"},
		Want: any, Kind: holdersKind, Input: 0, Wait: 3})
	return cases, nil
}

// flagCases give ctxleak flags that are out of range, overflow or point
// outputs where they must not go.
func flagCases(a *assets) ([]Case, error) {
	d := filepath.Join(a.dir, "flags")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, err
	}
	fifo, err := mkfifo(d, "out-fifo")
	if err != nil {
		return nil, err
	}
	prof := filepath.Join(a.dir, "profiles", "real-heap")
	any := []int{0, 1, 2}
	h := func(name string, want []int, args ...string) Case {
		return Case{Cat: "flag", Name: name, Args: append([]string{"holders", a.dump, "--binary", a.exe}, args...), Want: want, Kind: holdersKind, Input: size(a.dump)}
	}
	an := func(name string, want []int, args ...string) Case {
		return Case{Cat: "flag", Name: name, Args: append([]string{"analyze", prof}, args...), Want: want, Kind: analyzeKind, Input: size(prof)}
	}
	huge := "99999999999999999999999999"
	cases := []Case{
		h("top-negative", nil, "--top", "-1"),
		h("top-huge", any, "--top", "2147483647"),
		h("top-overflow", nil, "--top", huge),
		h("min-size-negative", nil, "--min-size", "-1"),
		h("min-size-zero", any, "--min-size", "0"),
		h("min-size-overflow", nil, "--min-size", huge+"TiB"),
		h("min-size-float", any, "--min-size", "1e300"),
		h("min-size-nan", nil, "--min-size", "NaN"),
		h("min-size-evil", nil, "--min-size", "1\x1b[31m\n::error::forged"),
		h("max-path-negative", nil, "--max-path-steps", "-1"),
		h("max-path-zero", any, "--max-path-steps", "0"),
		h("max-path-huge", any, "--max-path-steps", "9223372036854775807"),
		h("max-path-overflow", nil, "--max-path-steps", huge),
		h("focus-bad", nil, "--focus", "("),
		h("focus-repeat", nil, "--focus", "a{1000}{1000}"),
		h("focus-huge", any, "--focus", strings.Repeat("(a|b)*", 20_000)),
		h("focus-evil", any, "--focus", "\x1b[31m\n::error::forged"),
		h("format-bad", nil, "--format", "\x1b[31mxml"),
		h("out-fifo-force", any, "-o", fifo, "--force"),
		h("out-fifo", any, "-o", fifo),
		h("out-dev-full", any, "-o", "/dev/full", "--force"),
		h("out-dir", nil, "-o", d, "--force"),
		h("out-missing-dir", nil, "-o", filepath.Join(d, "no", "such")),
		h("max-dump-size-negative", nil, "--max-dump-size", "-1"),
		h("http-timeout-negative", any, "--http-timeout", "-1s"),
		h("http-bad", nil, "--http", "256.0.0.1:99999", "--no-browser"),
		h("color-bad", nil, "--color", "\x1b[31m"),
		an("an-top-negative", nil, "--top", "-1"),
		an("an-requests-negative", nil, "--requests", "-5"),
		an("an-requests-huge", any, "--requests", "9223372036854775807"),
		an("an-fail-on-goroutines-negative", nil, "--fail-on-goroutines", "-5"),
		an("an-fail-on-retained-negative", nil, "--fail-on-retained", "-1"),
		an("an-fail-on-growth-overflow", nil, "--fail-on-growth", huge+"EiB"),
		an("an-max-profile-size-0", any, "--max-profile-size", "0"),
		an("an-max-profile-size-negative", nil, "--max-profile-size", "-1"),
		an("an-max-profile-size-huge", any, "--max-profile-size", "8EiB"),
		an("an-by-bad", nil, "--by", "\x1b[31mx"),
		an("an-helper-bad", nil, "--helper", "("),
		an("an-http-timeout-0", any, "--http-timeout", "0s"),
		an("an-base-self", any, "--base", prof, "--fail-on-growth", "0B"),
		an("an-request-label-evil", any, "--request-label", "\x1b[31m\n::error::forged"),
		{Cat: "flag", Name: "run-payload-huge", Args: []string{"run", "--payload", "100TiB"}, Kind: otherKind},
		{Cat: "flag", Name: "run-payload-negative", Args: []string{"run", "--payload", "-1"}, Kind: otherKind},
		{Cat: "flag", Name: "run-payload-overflow", Args: []string{"run", "--payload", huge}, Kind: otherKind},
		{Cat: "flag", Name: "unknown-command", Args: []string{"\x1b[31mholders"}, Kind: otherKind},
		{Cat: "flag", Name: "unknown-flag", Args: []string{"holders", "--\x1b[31mx"}, Kind: otherKind},
	}
	return cases, nil
}
