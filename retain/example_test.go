package retain_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/retain"
)

type exampleKey string

// handleLeaky answers the request at once and audits it in the background:
// the audit goroutine waits for a flush and then reads ctx, so until the
// flush it holds ctx, and through ctx the whole request body.
func handleLeaky(ctx context.Context, flush <-chan struct{}) {
	go func() {
		<-flush
		audit(ctx.Value(exampleKey("id")))
	}()
}

// handleFixed gives the audit goroutine only the request id it needs.
func handleFixed(ctx context.Context, flush <-chan struct{}) {
	id := ctx.Value(exampleKey("id"))
	go func() {
		<-flush
		audit(id)
	}()
}

func audit(any) {}

// serveUpload runs one upload request through handle, as a server would:
// the body goes in the request's context, which is cancelled when the
// handler returns.
func serveUpload(tr *retain.Tracker, handle func(context.Context, <-chan struct{}), flush <-chan struct{}) {
	body := make([]byte, 1<<20)
	tr.Track(body, "request body")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = context.WithValue(ctx, exampleKey("id"), "req-42")
	ctx = context.WithValue(ctx, exampleKey("body"), body)
	handle(ctx, flush)
}

// A handler leaves a goroutine behind that holds the request context: the
// body stays alive after the request. In a test, AssertReleased would fail
// here with a heap dump; outside a test, Released says what is still alive.
func Example() {
	tr := retain.NewTracker(retain.Timeout(100 * time.Millisecond))
	flush := make(chan struct{})
	defer close(flush)

	serveUpload(tr, handleLeaky, flush)

	alive, _ := tr.Released(context.Background())
	for _, v := range alive {
		fmt.Printf("still alive: %s (%s, %d bytes)\n", v.Label, v.Type, v.Size)
	}
	// Output: still alive: request body ([]uint8, 1048576 bytes)
}

// The fixed handler hands its goroutine the request id only: the body is
// freed as soon as the request ends, even though the goroutine still runs.
func Example_fixed() {
	tr := retain.NewTracker()
	flush := make(chan struct{})
	defer close(flush)

	serveUpload(tr, handleFixed, flush)

	alive, _ := tr.Released(context.Background())
	fmt.Println("still alive:", len(alive))
	// Output: still alive: 0
}

// In a test, New ties the tracker to t: AssertReleased fails the test with a
// report of who holds each value still alive, and keeps the heap dump for
// `ctxleak holders`.
func ExampleNew() {
	var t *testing.T // the test's t, in func TestUpload(t *testing.T)

	tr := retain.New(t)
	flush := make(chan struct{})
	defer close(flush)
	serveUpload(tr, handleLeaky, flush)
	// Fails: "request body" []uint8 of 1.0 MiB retains 1.0 MiB ...
	// held by goroutine 7 [chan receive], frame ...retain_test.handleLeaky.func1 ...
	tr.AssertReleased()
}

// Values the runtime could never report as freed are refused up front.
func ExampleTracker_Track_refused() {
	tr := retain.NewTracker()
	var hits int64
	err := tr.Track(&hits, "hit counter")
	fmt.Println(errors.Is(err, retain.ErrNotTrackable))
	fmt.Println(err)
	// Output:
	// true
	// retain: cannot track "hit counter" (*int64): pointer-free and under 16 bytes: the tiny allocator shares its block with other values, so it may never be freed; track what holds it
}

// Sample every allocation so that the holder report can say where a
// retained value was allocated. Call it first in TestMain:
//
//	func TestMain(m *testing.M) {
//		retain.EnableAllocSites()
//		os.Exit(m.Run())
//	}
func ExampleEnableAllocSites() {
	retain.EnableAllocSites()
}
