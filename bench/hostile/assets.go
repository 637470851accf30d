package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// assets are the executables, real dumps and the HTTP server the cases
// share. Executables and dumps are kept in the directory and reused.
type assets struct {
	dir string
	// Executables of bench/hostile/prog.
	exe, exeB, stripped, pie, cgo, arm64, i386, darwin, windows, rawDWARF string
	// arches are builds for big-endian and other 32- and 64-bit targets.
	arches []string
	// Dumps: dump is written by exe, dumpB by exeB, longList by exe with a
	// 1M-node list and a chain of 64 KiB objects, deferrers by exe with
	// 100,000 goroutines that each have a stack object and a defer record,
	// labelled with 80,000 goroutines blocked in pprof.Do on one channel,
	// timeouts with 80,000 pending WithTimeout contexts.
	dump, dumpB, longList, deferrers, labelled, timeouts string
	// rawDWARFDump is written by rawDWARF; pieDump and strippedDump by pie
	// and stripped.
	rawDWARFDump, pieDump, strippedDump string
	// url is the base URL of the campaign's HTTP server.
	url string
	srv *http.Server
}

func (a *assets) close() {
	if a.srv != nil {
		a.srv.Close()
	}
}

// prepare builds the executables and writes the dumps that are missing.
func prepare(d string) (*assets, error) {
	a := &assets{dir: d}
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "prog")
	cgoSrc := filepath.Join(filepath.Dir(file), "cgoprog")
	builds := []struct {
		dst   *string
		name  string
		src   string
		env   []string
		flags []string
	}{
		{&a.exe, "prog", src, nil, nil},
		{&a.exeB, "prog-b", src, nil, []string{"-ldflags=-X main.build=b"}},
		{&a.stripped, "prog-stripped", src, nil, []string{"-ldflags=-s -w"}},
		{&a.pie, "prog-pie", src, nil, []string{"-buildmode=pie"}},
		{&a.rawDWARF, "prog-rawdwarf", src, nil, []string{"-ldflags=-compressdwarf=false"}},
		{&a.arm64, "prog-arm64", src, []string{"GOARCH=arm64"}, nil},
		{&a.i386, "prog-386", src, []string{"GOARCH=386"}, nil},
		{&a.darwin, "prog-darwin", src, []string{"GOOS=darwin"}, nil},
		{&a.windows, "prog-windows.exe", src, []string{"GOOS=windows"}, nil},
		{&a.cgo, "prog-cgo", cgoSrc, []string{"CGO_ENABLED=1"}, nil},
	}
	arches := []string{"mips", "ppc64", "s390x", "riscv64", "loong64", "wasm"}
	a.arches = make([]string, len(arches))
	for i, arch := range arches {
		goos := "linux"
		if arch == "wasm" {
			goos = "js"
		}
		builds = append(builds, struct {
			dst   *string
			name  string
			src   string
			env   []string
			flags []string
		}{&a.arches[i], "prog-" + arch, src, []string{"GOARCH=" + arch, "GOOS=" + goos}, nil})
	}
	for _, b := range builds {
		*b.dst = filepath.Join(d, b.name)
		if _, err := os.Stat(*b.dst); err == nil {
			continue
		}
		args := append([]string{"build", "-o", *b.dst}, b.flags...)
		cmd := exec.Command("go", append(args, ".")...)
		cmd.Dir = b.src
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", b.name, err, out)
		}
	}
	dumps := []struct {
		dst  *string
		name string
		exe  string
		args []string
	}{
		{&a.dump, "prog.heapdump", a.exe, nil},
		{&a.dumpB, "prog-b.heapdump", a.exeB, nil},
		{&a.longList, "list1m.heapdump", a.exe, []string{"-list", "1000000", "-chain", "2000"}},
		{&a.deferrers, "deferrers100k.heapdump", a.exe, []string{"-deferrers", "100000"}},
		{&a.labelled, "labelled80k.heapdump", a.exe, []string{"-labelled", "80000"}},
		{&a.timeouts, "timeouts80k.heapdump", a.exe, []string{"-timeouts", "80000"}},
		{&a.rawDWARFDump, "prog-rawdwarf.heapdump", a.rawDWARF, nil},
		{&a.pieDump, "prog-pie.heapdump", a.pie, nil},
		{&a.strippedDump, "prog-stripped.heapdump", a.stripped, nil},
	}
	for _, x := range dumps {
		*x.dst = filepath.Join(d, x.name)
		if _, err := os.Stat(*x.dst); err == nil {
			continue
		}
		out, err := exec.Command(x.exe, append(x.args, *x.dst)...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%s: %v\n%s", x.exe, err, out)
		}
	}
	a.bombBytes()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a.url = "http://" + ln.Addr().String()
	a.srv = &http.Server{Handler: http.HandlerFunc(a.serve)}
	go a.srv.Serve(ln)
	return a, nil
}

// serve answers the URL cases: /endless streams zeros for ever, /redirect
// redirects to itself, /evil answers 500 with control characters, /bomb
// serves a gzip bomb, /dump serves the base dump with a build ID that is
// not --binary's, /slow sends a byte a second.
func (a *assets) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/endless"):
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	case strings.HasSuffix(r.URL.Path, "/redirect"):
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	case strings.HasSuffix(r.URL.Path, "/evil"):
		w.Header().Set("Content-Type", "text/plain\x1b[31m")
		w.WriteHeader(500)
		fmt.Fprint(w, "\x1b]0;owned\x07\n::error::forged\n\u202eevil")
	case strings.HasSuffix(r.URL.Path, "/bomb"):
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(a.bombBytes())
	case strings.HasSuffix(r.URL.Path, "/dump"):
		http.ServeFile(w, r, a.dump)
	case strings.HasSuffix(r.URL.Path, "/slow"):
		for range 600 {
			if _, err := w.Write([]byte{0}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-timeAfter():
			}
		}
	default:
		http.NotFound(w, r)
	}
}

var (
	bombOnce sync.Once
	bomb     []byte
)

// bombBytes returns 1 GiB of zeros gzipped, made once.
func (a *assets) bombBytes() []byte {
	bombOnce.Do(func() { bomb = gzipZeros(1 << 30) })
	return bomb
}
