package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ctxleak/ctxleak/binsym"
	"github.com/ctxleak/ctxleak/internal/bytesize"
	"github.com/ctxleak/ctxleak/watch"
)

// isURL reports whether a DUMP argument is an http(s) URL.
func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// downloadDump fetches the heap dump at url (watch's heapdump endpoint) into
// a new 0600 file of a new temporary directory, within timeout and at most
// limit bytes, and returns its path and the function that deletes it. When
// binary is set and the response names the build ID of the executable that
// wrote the dump, the two must match: the dump is refused (exit 2) before
// its body is read otherwise.
func downloadDump(url string, timeout time.Duration, limit bytesize.Size, binary string) (path string, cleanup func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", nil, usageErrorf("%s: %v", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", nil, usageErrorf("%s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return "", nil, usageErrorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(msg)))
	}
	if id := resp.Header.Get(watch.BuildIDHeader); id != "" && binary != "" {
		want, err := binsym.GoBuildID(binary)
		if err != nil {
			return "", nil, usageErrorf("--binary: %v", err)
		}
		if id != want {
			return "", nil, usageErrorf("%s: the dump was written by build ID %s, --binary %s has %s: give the executable that is running there", url, id, binary, want)
		}
	}
	dir, err := os.MkdirTemp("", "ctxleak-holders-*")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	f, err := os.CreateTemp(dir, "download-*.heapdump") // 0600
	if err != nil {
		cleanup()
		return "", nil, err
	}
	err = errors.Join(copyDump(f, resp.Body, int64(limit), resp.ContentLength), f.Close())
	var de *dumpStreamError
	switch {
	case errors.As(err, &de):
		cleanup()
		return "", nil, usageErrorf("%s: %v", url, de)
	case err != nil:
		cleanup()
		return "", nil, usageErrorf("%s: downloading the dump: %v", url, err)
	}
	return f.Name(), cleanup, nil
}
