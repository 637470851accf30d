// Command hostile is the hostile-input campaign of issue 10: it generates
// inputs of every category the issue names and more (bench/hostile.sh runs
// it), runs ctxleak on each under /usr/bin/time with a time limit, and
// checks the targets:
//
//   - exit code 0, 1 or 2 (the case says which are allowed; 2 for refused
//     inputs), with a message on stderr when it is 2;
//   - no "panic:", "fatal error:" or goroutine trace on stderr;
//   - peak RSS at most 256 MiB + 1.5 x the dump's size (holders) or
//     256 MiB + 4 x --max-profile-size + the capped decompressed size
//     (analyze: decoding the profiles may take 4 times the cap in all,
//     --max-profile-size's help says);
//   - wall time at most 2 s + 10 s per GB of input;
//   - no control characters, invalid UTF-8 or bidi controls in stdout or
//     stderr (newlines and tabs apart), and no GitHub workflow command
//     forged from input text.
//
// Usage: hostile -ctxleak EXE -dir DIR [-run REGEX] [-slack F]
//
// It prints one line per case and a summary, and exits 1 when a case
// misses a target.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	// profileCap is analyze's default --max-profile-size.
	profileCap = 256 << 20
	mib        = int64(1) << 20
	gb         = int64(1e9)
)

// kind says which memory target applies to a case.
type kind int

const (
	holdersKind kind = iota // 256 MiB + 1.5 x input
	analyzeKind             // 256 MiB + 4 x the size cap + the capped decompressed size
	otherKind               // 256 MiB
)

// Case is one run of ctxleak on hostile input.
type Case struct {
	Cat   string   // category, for the table
	Name  string   // unique name
	Args  []string // ctxleak's arguments
	Stdin string   // file to read standard input from ("" for /dev/null)
	Want  []int    // allowed exit codes; nil means {2}
	Kind  kind
	Input int64 // bytes the targets are computed from: the input's size
	// Decompressed is, for analyze, the size of the profile decompressed
	// (0: Input).
	Decompressed int64
	// Mention, when set, must appear in stderr when the exit code is 2.
	Mention string
	// Forbid, when set, must not appear in stdout or stderr.
	Forbid string
	// Wait is added to the time limit: a timeout the case sets.
	Wait float64
	// Cap is analyze's --max-profile-size in the case (0: the default).
	Cap int64
}

// Result is what running a case gave.
type Result struct {
	Case
	Code        int
	Wall, CPU   float64
	RSS         int64
	Limit       float64
	RSSLimit    int64
	Problems    []string
	StderrFirst string
}

var (
	ctxleak = flag.String("ctxleak", "", "the ctxleak executable to test")
	dir     = flag.String("dir", "", "directory for the generated inputs (made if missing)")
	runRE   = flag.String("run", "", "run only the cases whose category/name match this regular expression")
	slack   = flag.Float64("slack", 1, "multiply the time limits by this factor (a loaded machine)")
	verbose = flag.Bool("v", false, "print every case, not only failures")
)

func main() {
	flag.Parse()
	if *ctxleak == "" || *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: hostile -ctxleak EXE -dir DIR [-run REGEX] [-slack F] [-v]")
		os.Exit(2)
	}
	var re *regexp.Regexp
	if *runRE != "" {
		re = regexp.MustCompile(*runRE)
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fatal(err)
	}
	gens := []struct {
		cats []string
		gen  func(*assets) ([]Case, error)
	}{
		{[]string{"sparse"}, sparseCases},
		{[]string{"dump"}, dumpCases},
		{[]string{"contents"}, contentCases},
		{[]string{"binary", "dwarf"}, binaryCases},
		{[]string{"pprof"}, profileCases},
		{[]string{"file"}, fileCases},
		{[]string{"flag"}, flagCases},
	}
	// Generating takes time: skip the generators of no selected case, and
	// the executables and real dumps when only sparse cases are selected,
	// which need none.
	wanted := make([]bool, len(gens))
	a := &assets{dir: *dir}
	for i, g := range gens {
		wanted[i] = re == nil
		for _, c := range g.cats {
			wanted[i] = wanted[i] || re.MatchString(c+"/") || re.MatchString(c+"/x") || strings.Contains(*runRE, c)
		}
		if wanted[i] && g.cats[0] != "sparse" && a.exe == "" {
			var err error
			if a, err = prepare(*dir); err != nil {
				fatal(err)
			}
			defer a.close()
		}
	}
	var cases []Case
	for i, g := range gens {
		if !wanted[i] {
			continue
		}
		cs, err := g.gen(a)
		if err != nil {
			fatal(err)
		}
		cases = append(cases, cs...)
	}
	seen := map[string]bool{}
	fails := 0
	run := 0
	byCat := map[string][2]int{}
	var cats []string
	for _, c := range cases {
		id := c.Cat + "/" + c.Name
		if seen[id] {
			fatal(fmt.Errorf("case %s twice", id))
		}
		seen[id] = true
		if re != nil && !re.MatchString(id) {
			continue
		}
		r := runCase(c)
		run++
		if _, ok := byCat[c.Cat]; !ok {
			cats = append(cats, c.Cat)
		}
		n := byCat[c.Cat]
		n[0]++
		if len(r.Problems) > 0 {
			n[1]++
			fails++
		}
		byCat[c.Cat] = n
		if len(r.Problems) > 0 || *verbose {
			status := "ok  "
			if len(r.Problems) > 0 {
				status = "FAIL"
			}
			fmt.Printf("%s %-34s exit %-3d %6.2fs/%5.1fs %6dMiB/%6dMiB  %s\n", status, id, r.Code, r.Wall, r.Limit, r.RSS/mib, r.RSSLimit/mib, r.StderrFirst)
			for _, p := range r.Problems {
				fmt.Printf("     - %s\n", p)
			}
		}
	}
	fmt.Printf("\n%-12s %6s %6s\n", "category", "cases", "failed")
	for _, c := range cats {
		fmt.Printf("%-12s %6d %6d\n", c, byCat[c][0], byCat[c][1])
	}
	fmt.Printf("%-12s %6d %6d\n", "all", run, fails)
	if fails > 0 {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "hostile:", err)
	os.Exit(2)
}

// runCase runs ctxleak on c under /usr/bin/time and timeout, and checks the
// targets.
func runCase(c Case) Result {
	r := Result{Case: c}
	r.Limit = (2+10*float64(c.Input)/float64(gb))**slack + c.Wait
	switch c.Kind {
	case holdersKind:
		r.RSSLimit = 256*mib + c.Input*3/2
	case analyzeKind:
		dec := c.Decompressed
		if dec == 0 {
			dec = c.Input
		}
		limit := c.Cap
		if limit == 0 {
			limit = profileCap
		}
		r.RSSLimit = 256*mib + 4*limit + min(dec, limit)
	default:
		r.RSSLimit = 256 * mib
	}
	timeFile := filepath.Join(*dir, "time.out")
	kill := strconv.Itoa(int(r.Limit*3) + 5)
	args := append([]string{"-f", "%e %U %S %M", "-o", timeFile, "timeout", "-s", "KILL", kill, *ctxleak}, c.Args...)
	cmd := exec.Command("/usr/bin/time", args...)
	cmd.Dir = *dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	stdin := c.Stdin
	if stdin == "" {
		stdin = os.DevNull
	}
	in, err := os.Open(stdin)
	if err != nil {
		r.Problems = append(r.Problems, "stdin: "+err.Error())
		return r
	}
	defer in.Close()
	cmd.Stdin = in
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &capped{b: &stdout, n: 4 << 20}
	cmd.Stderr = &capped{b: &stderr, n: 1 << 20}
	err = cmd.Run()
	r.Code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		r.Problems = append(r.Problems, "run: "+err.Error())
		return r
	}
	tb, _ := os.ReadFile(timeFile)
	lines := strings.Split(strings.TrimSpace(string(tb)), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) == 4 {
		r.Wall, _ = strconv.ParseFloat(f[0], 64)
		u, _ := strconv.ParseFloat(f[1], 64)
		s, _ := strconv.ParseFloat(f[2], 64)
		r.CPU = u + s
		kb, _ := strconv.ParseInt(f[3], 10, 64)
		r.RSS = kb << 10
	} else {
		r.Problems = append(r.Problems, fmt.Sprintf("time output %q", tb))
	}
	if first, _, _ := strings.Cut(stderr.String(), "\n"); true {
		r.StderrFirst = safe(first, 110)
	}
	want := c.Want
	if want == nil {
		want = []int{2}
	}
	switch {
	case r.Code == 124 || r.Code == 137 || strings.Contains(string(tb), "signal 9"):
		r.Problems = append(r.Problems, fmt.Sprintf("killed after %ss: hangs or runs far too long", kill))
	case !slices.Contains(want, r.Code):
		r.Problems = append(r.Problems, fmt.Sprintf("exit %d, want %v", r.Code, want))
	}
	if r.Code == 2 && strings.TrimSpace(stderr.String()) == "" {
		r.Problems = append(r.Problems, "exit 2 without a message")
	}
	if r.Code == 2 && c.Mention != "" && !strings.Contains(stderr.String(), c.Mention) {
		r.Problems = append(r.Problems, fmt.Sprintf("message does not name %q", c.Mention))
	}
	for _, bad := range []string{"panic:", "fatal error:", "SIGSEGV", "runtime.throw", "\ngoroutine ", "runtime stack:"} {
		if strings.Contains(stderr.String(), bad) || strings.HasPrefix(stderr.String(), strings.TrimPrefix(bad, "\n")) {
			r.Problems = append(r.Problems, fmt.Sprintf("stderr holds %q", strings.TrimSpace(bad)))
		}
	}
	if r.Wall > r.Limit {
		r.Problems = append(r.Problems, fmt.Sprintf("wall %.2fs over the %.2fs target (cpu %.2fs)", r.Wall, r.Limit, r.CPU))
	}
	if r.RSS > r.RSSLimit {
		r.Problems = append(r.Problems, fmt.Sprintf("peak RSS %d MiB over the %d MiB target", r.RSS/mib, r.RSSLimit/mib))
	}
	for name, b := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
		if i, what := unsafeAt(b); i >= 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: %s at byte %d: %s", name, what, i, safe(string(b[max(0, i-40):min(len(b), i+40)]), 100)))
		}
		if c.Forbid != "" && bytes.Contains(b, []byte(c.Forbid)) {
			r.Problems = append(r.Problems, fmt.Sprintf("%s holds %q", name, c.Forbid))
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "::") && strings.Contains(line, "forged") {
				r.Problems = append(r.Problems, fmt.Sprintf("%s: forged workflow command %s", name, safe(line, 80)))
			}
		}
	}
	return r
}

// unsafeAt returns the index of the first byte of b that must not reach a
// terminal, and what it is, or -1.
func unsafeAt(b []byte) (int, string) {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return i, "invalid UTF-8"
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return i, fmt.Sprintf("control character %U", r)
		case r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069'):
			return i, fmt.Sprintf("formatting character %U", r)
		}
		i += size
	}
	return -1, ""
}

// safe quotes s for the campaign's own output, cut to n bytes.
func safe(s string, n int) string {
	q := strconv.QuoteToASCII(s)
	q = q[1 : len(q)-1]
	if len(q) > n {
		q = q[:n] + "..."
	}
	return q
}

// capped keeps the first n bytes written to it and drops the rest.
type capped struct {
	b *bytes.Buffer
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.n - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// sparse writes head at offset 0 and tail at the end of a file size bytes
// long (a hole in between), mode 0600, and returns its path.
func sparse(path string, head []byte, size int64, tail []byte) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		return "", err
	}
	if err := f.Truncate(size); err != nil {
		return "", err
	}
	if len(tail) > 0 {
		if _, err := f.WriteAt(tail, size-int64(len(tail))); err != nil {
			return "", err
		}
	}
	return path, nil
}

// write writes b to dir/name, mode 0600, and returns the path.
func write(d, name string, b []byte) (string, error) {
	p := filepath.Join(d, name)
	return p, os.WriteFile(p, b, 0o600)
}

// mkfifo makes a named pipe at dir/name, if missing.
func mkfifo(d, name string) (string, error) {
	p := filepath.Join(d, name)
	if _, err := os.Lstat(p); err == nil {
		return p, nil
	}
	return p, syscall.Mkfifo(p, 0o600)
}

// size returns the size of the file at path, 0 if it cannot be read.
func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

var _ = time.Second
