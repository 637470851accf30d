// Command heapgen writes a heap dump of a benchmark heap: n linked 80-byte
// nodes, a map holding every other node, and a 50 MiB payload held through
// a context.Context by a blocked goroutine (the heap of
// /work/shared/notes/peers.md). The dump has about n object records plus
// the map's tables.
//
// With -holders 2 or more, that many goroutines hold the context, so that
// no single root holds the payload: the report then searches for the
// nearest holder and lists the others.
//
// With -goroutines G, G more goroutines blocked in main.hold each hold a
// context of their own with a payload of -each bytes (the many-holdings
// heap of issue 10: 100,000 goroutines each holding 4 KiB).
//
// Usage: heapgen [-n NODES] [-holders K] [-goroutines G -each BYTES] -o FILE
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

type node struct {
	next *node
	id   int
	pad  [8]int64
}

type payloadKey struct{}

var (
	head  *node
	index map[int]*node
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "heapgen:", err)
		os.Exit(2)
	}
}

func run(stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("heapgen", flag.ContinueOnError)
	n := fs.Int("n", 1_000_000, "number of linked 80-byte nodes")
	holders := fs.Int("holders", 1, "number of goroutines that hold the payload's context")
	goroutines := fs.Int("goroutines", 0, "number of further goroutines, each holding a payload of its own")
	each := fs.Int("each", 4096, "bytes of each further goroutine's payload")
	out := fs.String("o", "", "write the dump to `file` (created, mode 0600; must not exist)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() != 0 || *n < 0 || *holders < 1 || *goroutines < 0 || *each < 0 {
		return errors.New("usage: heapgen [-n NODES] [-holders K] [-goroutines G -each BYTES] -o FILE")
	}
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}

	index = make(map[int]*node, *n/2)
	for i := 0; i < *n; i++ {
		head = &node{next: head, id: i}
		if i%2 == 0 {
			index[i] = head
		}
	}
	ctx := context.WithValue(context.Background(), payloadKey{}, make([]byte, 50<<20))
	release := make(chan struct{})
	for range *holders {
		go hold(ctx, release)
	}
	for range *goroutines {
		go hold(context.WithValue(context.Background(), payloadKey{}, make([]byte, *each)), release)
	}
	waitBlocked("main.hold", *holders+*goroutines)

	runtime.GC()
	t0 := time.Now()
	debug.WriteHeapDump(f.Fd())
	took := time.Since(t0)
	if err := f.Close(); err != nil {
		return err
	}
	fi, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d nodes, %d bytes, dumped in %.2fs\n", *out, *n, fi.Size(), took.Seconds())
	close(release)
	return nil
}

// hold keeps ctx, and the payload in it, alive until release is closed.
//
//go:noinline
func hold(ctx context.Context, release chan struct{}) {
	<-release
	runtime.KeepAlive(ctx.Value(payloadKey{}))
}

// waitBlocked polls goroutine stacks, backing off, until k goroutines are
// blocked in fn.
func waitBlocked(fn string, k int) {
	buf := make([]byte, 1<<20)
	for d := 50 * time.Microsecond; ; d *= 2 {
		n := runtime.Stack(buf, true)
		if n == len(buf) { // truncated: read all the stacks next time
			buf = make([]byte, 2*len(buf))
			continue
		}
		blocked := 0
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "[chan receive") && strings.Contains(g, fn+"(") {
				blocked++
			}
		}
		if blocked >= k {
			return
		}
		time.Sleep(min(d, 100*time.Millisecond))
	}
}
