package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Reading README.md for TestREADME: its marked blocks, and the shape of
// a line of output.

// readmeBlock is a shell block of README.md, a sample block with its
// "$ " commands, or a Go file of readmeGoFiles.
type readmeBlock struct {
	name string // from the runnable marker
	line int    // README line of the opening fence
	// sample is set for a plain ``` block of commands and their output.
	sample   bool
	commands []readmeCommand
	goFile   string // the Go source, for a block of readmeGoFiles
	// report is the watch report sample, which no command prints: the
	// service writes it (watchReport).
	report []string
}

// readmeCommand is one command of a block (continuation lines joined) and,
// in a sample, the output the README shows for it. A sample command whose
// output shows a failure ("FAIL" or "--- FAIL" lines) may exit 1.
type readmeCommand struct {
	text    string
	output  []string
	mayFail bool
}

var runnableMarker = regexp.MustCompile(`^<!-- runnable ([a-z-]+):`)

// parseREADME returns the shell and sample blocks of README.md, in order.
func parseREADME(t *testing.T, data []byte) []readmeBlock {
	t.Helper()
	lines := strings.Split(string(data), "\n")
	var blocks []readmeBlock
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		isSample := lang == "" && slices.ContainsFunc(body, func(l string) bool { return strings.HasPrefix(l, "$ ") })
		name := ""
		if start > 0 {
			if m := runnableMarker.FindStringSubmatch(lines[start-1]); m != nil {
				name = m[1]
			}
		}
		if _, isFile := readmeGoFiles[name]; isFile && lang == "go" {
			blocks = append(blocks, readmeBlock{name: name, line: start + 1, goFile: strings.Join(body, "\n") + "\n"})
			continue
		}
		if name == "watch-report" && lang == "" {
			blocks = append(blocks, readmeBlock{name: name, line: start + 1, report: body})
			continue
		}
		if lang != "sh" && !isSample {
			continue
		}
		if _, known := readmeDirs[name]; !known {
			t.Errorf("README.md:%d: a shell example without a known <!-- runnable NAME: --> marker on the line before (%q); TestREADME runs every one", start+1, name)
			continue
		}
		b := readmeBlock{name: name, line: start + 1, sample: isSample}
		for j := 0; j < len(body); j++ {
			l := body[j]
			if isSample {
				cmd, isCmd := strings.CutPrefix(l, "$ ")
				if !isCmd {
					if n := len(b.commands); n > 0 && l != "..." {
						b.commands[n-1].output = append(b.commands[n-1].output, l)
						if strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "--- FAIL") {
							b.commands[n-1].mayFail = true
						}
					}
					continue
				}
				l = cmd
			} else if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			for strings.HasSuffix(l, `\`) && j+1 < len(body) {
				j++
				l = strings.TrimSpace(strings.TrimSuffix(l, `\`)) + " " + strings.TrimSpace(body[j])
			}
			b.commands = append(b.commands, readmeCommand{text: l})
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// trailingComment is the "# comment" at the end of a command.
var trailingComment = regexp.MustCompile(`\s+#.*$`)

var (
	shapeInterval = regexp.MustCompile(`\s*\([^()]*–[^()]*\)`)
	shapeSize     = regexp.MustCompile(`[+-]?\d[\d.,]*\s?(B|KiB|MiB|GiB)\b`)
	shapeDuration = regexp.MustCompile(`\d[\d.]*\s?(ns|µs|us|ms|s)\b`)
	shapeNumber   = regexp.MustCompile(`\d+(\.\d+)?`)
	shapeDashes   = regexp.MustCompile(`--+`)
	shapeSpaces   = regexp.MustCompile(`\s+`)
	shapeDirs     = regexp.MustCompile(`(^|\s)(/[^\s/]+)+/`)
	shapeGCs      = regexp.MustCompile(` \(\d+ GCs\)`)
)

// shape is a line of output without what changes from run to run: sizes,
// durations with their units (a p99 of 996 µs on one run is 2.22 ms on
// another), numbers (goroutine ids, lines, versions), confidence intervals,
// the directories of absolute paths (TMPDIR), the widths of table columns,
// trailing space, and run's note of the GC cycles a release took when more
// than one (a busy machine runs a timer late: "freed (2 GCs)").
func shape(l string) string {
	l = shapeGCs.ReplaceAllString(l, "")
	l = shapeDirs.ReplaceAllString(l, "$1/DIR/")
	l = shapeInterval.ReplaceAllString(l, "")
	l = shapeSize.ReplaceAllString(l, "SIZE")
	l = shapeDuration.ReplaceAllString(l, "TIME")
	l = shapeNumber.ReplaceAllString(l, "0")
	l = shapeDashes.ReplaceAllString(l, "-")
	return strings.TrimSpace(shapeSpaces.ReplaceAllString(l, " "))
}
