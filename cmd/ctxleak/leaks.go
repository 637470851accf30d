package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/ctxleak/ctxleak/heap"
	"github.com/ctxleak/ctxleak/internal/inputfile"
	"github.com/ctxleak/ctxleak/internal/leakedg"
	"github.com/ctxleak/ctxleak/profiles"
)

// maxLeaksBytes bounds a --leaks input: the runtime cuts its traceback of
// all goroutines (debug=2) at 64 MiB, and profiles are far smaller.
const maxLeaksBytes = 80 << 20

// maxLeakedCount bounds the goroutines a --leaks profile may count in all:
// more than any process can run.
const maxLeakedCount = 1 << 31

// readLeaks reads --leaks source (a file, "-" or an http(s) URL): Go 1.27's
// goroutineleak profile, as the runtime's traceback of all goroutines
// (debug=2: the leaked ones by id) or as profile.proto or its debug=1 text
// (by stack), told apart from the first bytes. Refusals are usage errors
// naming source.
func (a *app) readLeaks(ctx context.Context, source string, timeout time.Duration) (*heap.Leaks, error) {
	var data []byte
	var err error
	switch {
	case source == stdinName:
		err = await(ctx, func() error {
			data, err = profiles.ReadLimited(a.stdin, "input", maxLeaksBytes, 0)
			return err
		})
	case isURL(source):
		data, err = fetchLeaks(ctx, source, timeout)
	default:
		data, err = readLeaksFile(source)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, usageErrorf("--leaks %s: %v", source, err)
	}
	if isGoroutineDump(data) {
		return leaksFromTraceback(source, data)
	}
	p, err := (&profiles.Loader{MaxBytes: maxLeaksBytes}).Read(source, bytes.NewReader(data))
	if err != nil {
		return nil, usageErrorf("--leaks %v", err)
	}
	if p.Kind != profiles.GoroutineLeak {
		return nil, usageErrorf("--leaks %s: a %s profile, not a goroutineleak profile (Go 1.27's /debug/pprof/goroutineleak)", source, p.Kind)
	}
	return leaksFromProfile(source, p.Prof)
}

// readLeaksFile reads a --leaks file of at most maxLeaksBytes.
func readLeaksFile(path string) ([]byte, error) {
	f, fi, err := inputfile.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	defer f.Close()
	// The kind first, then the size: a heap dump of any size is one.
	head := make([]byte, len(heapDumpHeader))
	n, _ := f.ReadAt(head, 0)
	if err := notHeapDump(head[:n]); err != nil {
		return nil, err
	}
	if fi.Size() > maxLeaksBytes {
		return nil, fmt.Errorf("%d bytes, more than a goroutineleak profile or traceback has (at most %d)", fi.Size(), maxLeaksBytes)
	}
	return profiles.ReadLimited(f, "file", maxLeaksBytes, fi.Size())
}

// fetchLeaks GETs a --leaks URL within timeout, at most maxLeaksBytes.
func fetchLeaks(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: %q", resp.Status, strings.TrimSpace(string(msg)))
	}
	body := bufio.NewReader(resp.Body)
	head, _ := body.Peek(len(heapDumpHeader))
	if err := notHeapDump(head); err != nil {
		return nil, err
	}
	if resp.ContentLength > maxLeaksBytes {
		return nil, fmt.Errorf("%d bytes, more than a goroutineleak profile or traceback has (at most %d)", resp.ContentLength, maxLeaksBytes)
	}
	return profiles.ReadLimited(body, "download", maxLeaksBytes, 0)
}

// notHeapDump refuses an input whose first bytes are a heap dump's.
func notHeapDump(head []byte) error {
	if string(head) == heapDumpHeader {
		return errors.New("a Go heap dump, not a goroutineleak profile: give it as DUMP, the profile to --leaks")
	}
	return nil
}

// leaksFromTraceback returns the goroutines a traceback of all goroutines
// marks "(leaked)", by id.
func leaksFromTraceback(source string, data []byte) (*heap.Leaks, error) {
	all := leakedg.Parse(data, false)
	if len(all) == 0 {
		return nil, usageErrorf("--leaks %s: starts as a goroutine traceback but has no goroutine header (\"goroutine 7 [chan send (leaked)]:\")", source)
	}
	l := &heap.Leaks{IDs: make(map[uint64]heap.LeakedStack)}
	for _, g := range leakedg.Parse(data, true) {
		l.IDs[g.ID] = heap.LeakedStack{Functions: g.Functions, Wait: g.Wait, Count: 1}
	}
	return l, nil
}

// leaksFromProfile returns the stacks of a goroutineleak profile, each
// with its functions, innermost first, inlined calls included, its wait
// reason and its count.
func leaksFromProfile(source string, p *profile.Profile) (*heap.Leaks, error) {
	l := &heap.Leaks{Stacks: []heap.LeakedStack{}}
	var total int64
	for _, s := range p.Sample {
		if len(s.Value) == 0 || s.Value[0] <= 0 {
			continue
		}
		if total += s.Value[0]; s.Value[0] > maxLeakedCount || total > maxLeakedCount {
			return nil, usageErrorf("--leaks %s: goroutine counts that add up to more than %d: no real profile has them", source, int64(maxLeakedCount))
		}
		st := heap.LeakedStack{Wait: profiles.BlockedOn(s.Location), Count: int(s.Value[0])}
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil {
					st.Functions = append(st.Functions, ln.Function.Name)
				}
			}
		}
		l.Stacks = append(l.Stacks, st)
	}
	return l, nil
}
