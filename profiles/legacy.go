package profiles

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// symbolizeLegacy gives the locations of a legacy (debug=1) text profile
// the function names, files and lines that the runtime wrote as "#" comment
// lines under each record:
//
//	3 @ 0x47d92e 0x4158ee 0x4dc199 0x483e41
//	# labels: {"request_id":"r-1"}
//	#	0x4dc198	main.worker+0x18	/src/main.go:10
//
// The comment addresses are the stack addresses minus one, which is the
// Address the legacy parser gives its locations. Inlined calls are several
// comment lines for one address, innermost first, as profile.Line wants.
// The runtime leaves out the leading runtime frames of each stack; those
// locations stay unnamed, and the analysis skips unnamed frames when it
// looks for an allocation site. For goroutine profiles the "# labels:"
// lines become the samples' labels, in record order, as the legacy parser
// makes one sample per record.
func symbolizeLegacy(p *profile.Profile, raw []byte) {
	frames := make(map[uint64][]profile.Line)
	funcs := make(map[[2]string]*profile.Function)
	var labels []map[string][]string // per record, for goroutine profiles
	goroutines := len(p.SampleType) == 1 && p.SampleType[0].Type == "goroutine"

	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	record := -1
	seenInRecord := map[uint64]bool{}
	header := true
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(trimmed, "---") {
			break
		}
		if !strings.HasPrefix(trimmed, "#") {
			if header {
				// The "heap profile: ..." or "goroutine profile: total N" line.
				header = false
				continue
			}
			record++
			clear(seenInRecord)
			if goroutines {
				labels = append(labels, nil)
			}
			continue
		}
		if record < 0 {
			continue
		}
		body := strings.TrimSpace(trimmed[1:])
		if rest, ok := strings.CutPrefix(body, "labels:"); ok {
			if goroutines {
				labels[record] = parseLegacyLabels(strings.TrimSpace(rest))
			}
			continue
		}
		addr, fn, file, lineNo, ok := parseLegacyFrame(line)
		if !ok {
			continue
		}
		if _, done := frames[addr]; done && !seenInRecord[addr] {
			continue // already named from an earlier record
		}
		seenInRecord[addr] = true
		key := [2]string{fn, file}
		f := funcs[key]
		if f == nil {
			f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: fn, SystemName: fn, Filename: file}
			funcs[key] = f
			p.Function = append(p.Function, f)
		}
		frames[addr] = append(frames[addr], profile.Line{Function: f, Line: lineNo})
	}
	for _, loc := range p.Location {
		if len(loc.Line) == 0 {
			loc.Line = frames[loc.Address]
		}
	}
	if goroutines && len(labels) == len(p.Sample) {
		for i, s := range p.Sample {
			if labels[i] != nil && s.Label == nil {
				s.Label = labels[i]
			}
		}
	}
}

// parseLegacyFrame reads "#\t0x4dc198\tmain.worker+0x18\t/src/main.go:10"
// (with tabs, possibly several, between the fields).
func parseLegacyFrame(line string) (addr uint64, fn, file string, lineNo int64, ok bool) {
	var fields []string
	for f := range strings.SplitSeq(strings.TrimPrefix(strings.TrimSpace(line), "#"), "\t") {
		if f = strings.TrimSpace(f); f != "" {
			fields = append(fields, f)
		}
	}
	if len(fields) != 3 {
		return 0, "", "", 0, false
	}
	addr, err := strconv.ParseUint(fields[0], 0, 64)
	if err != nil {
		return 0, "", "", 0, false
	}
	fn = fields[1]
	if i := strings.LastIndex(fn, "+0x"); i > 0 {
		fn = fn[:i]
	}
	file = fields[2]
	if i := strings.LastIndexByte(file, ':'); i > 0 {
		if n, err := strconv.ParseInt(file[i+1:], 10, 64); err == nil {
			file, lineNo = file[:i], n
		}
	}
	return addr, fn, file, lineNo, true
}

// parseLegacyLabels reads {"key":"value", "k2":"v2"} as runtime/pprof
// prints it (Go-quoted strings). It returns nil if the text does not parse.
func parseLegacyLabels(s string) map[string][]string {
	s, ok := strings.CutPrefix(s, "{")
	if !ok {
		return nil
	}
	m := make(map[string][]string)
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return m
		}
		k, rest, ok := cutQuoted(s)
		if !ok {
			return nil
		}
		rest, ok = strings.CutPrefix(rest, ":")
		if !ok {
			return nil
		}
		v, rest, ok := cutQuoted(rest)
		if !ok {
			return nil
		}
		m[k] = append(m[k], v)
		s = rest
	}
}

func cutQuoted(s string) (value, rest string, ok bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", false
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", "", false
	}
	return v, s[len(q):], true
}
