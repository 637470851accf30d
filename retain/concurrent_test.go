package retain_test

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxleak/ctxleak/retain"
)

// TestConcurrentFailuresOwnDumps runs eight failing trackers at once: each
// failure's dump must hold the process as it is, not the analyses of the
// other failures (a parsed dump is many times the size of the process's
// own heap), and each report only its own value.
func TestConcurrentFailuresOwnDumps(t *testing.T) {
	const n = 8
	dir := t.TempDir()
	held := make([][]byte, n)
	for i := range held {
		held[i] = make([]byte, payloadSize)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		sizes = map[string]int64{}
	)
	for i := range n {
		wg.Go(func() {
			tb := &recordingTB{name: "concurrent/" + string(rune('A'+i))}
			tr := retain.New(tb, retain.Timeout(50*time.Millisecond), retain.DumpDir(dir))
			tr.Track(held[i], "body "+tb.name)
			if tr.AssertReleased() {
				t.Errorf("%s: a held body released", tb.name)
				return
			}
			msg := tb.text()
			if strings.Count(msg, `"body `) != 1 || !strings.Contains(msg, `"body `+tb.name+`"`) {
				t.Errorf("%s: the failure should name this body and no other:\n%s", tb.name, msg)
			}
			path := dumpNamed(t, msg)
			st, err := os.Stat(path)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			sizes[path] = st.Size()
			mu.Unlock()
		})
	}
	wg.Wait()
	runtime.KeepAlive(held)
	if len(sizes) != n {
		t.Fatalf("%d dumps, want %d", len(sizes), n)
	}
	lo, hi := int64(1<<62), int64(0)
	for _, s := range sizes {
		lo, hi = min(lo, s), max(hi, s)
	}
	t.Logf("%d dumps of %d to %d KiB", n, lo>>10, hi>>10)
	// The processes' own heap varies a little between dumps (test
	// output, the reports already made); another failure's analysis would
	// add several times the dump's size.
	if hi > lo+lo/2 {
		t.Errorf("dumps grew from %d to %d KiB: a dump holds another failure's analysis", lo>>10, hi>>10)
	}
}
