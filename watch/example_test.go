package watch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/ctxleak/ctxleak/watch"
)

// A service wraps its handler with the watcher's middleware and mounts the
// watcher's endpoints on its admin mux.
func ExampleWatcher_Middleware() {
	w := watch.New(watch.Options{}) // Grace 10 s, Threshold 5, MinInterval 10 min
	defer w.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(rw http.ResponseWriter, r *http.Request) {
		io.WriteString(rw, "hello")
	})
	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: w.Middleware(mux)}
	_ = srv // srv.ListenAndServe()

	admin := http.NewServeMux()
	admin.Handle("/debug/ctxleak/", w.Handler()) // loopback clients only by default
	_ = admin
}

// Track watches any other value that should be freed soon: here a job's
// payload, once the job is done.
func ExampleWatcher_Track() {
	w := watch.New(watch.Options{Grace: time.Minute})
	defer w.Close()

	payload := make([]byte, 64<<10)
	// ... the job uses payload ...
	if err := w.Track(payload, "job payload"); err != nil {
		fmt.Println(err)
	}
	// A value the runtime can never free is refused.
	err := w.Track("a string literal", "literal")
	fmt.Println(errors.Is(err, watch.ErrNotTrackable))
	fmt.Println(w.Stats().Label("job payload").Watched)
	// Output:
	// true
	// 1
}

// OnReport receives each report: the values that outlived their grace and
// who holds them.
func ExampleOptions_onReport() {
	w := watch.New(watch.Options{
		Threshold: 1,
		OnReport: func(r watch.Report) {
			for _, v := range r.Values {
				if v.Holder != nil {
					fmt.Printf("%s %q held by %s\n", v.Type, v.Label, v.Holder.Short())
				}
			}
		},
	})
	defer w.Close()
}

// Stats gives the counts per label, for tests and for a service's own
// metrics.
func ExampleWatcher_Stats() {
	w := watch.New(watch.Options{})
	defer w.Close()
	st := w.Stats()
	fmt.Println(st.Watched, st.Outlived, len(st.Labels))
	// Output: 0 0 0
}

// The status endpoint gives the counts as JSON, the document
// "ctxleak.watch/v1".
func ExampleWatcher_Handler() {
	w := watch.New(watch.Options{})
	defer w.Close()
	admin := http.NewServeMux()
	admin.Handle("/debug/ctxleak/", w.Handler())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: admin}
	go srv.Serve(ln)
	defer srv.Close()

	resp, err := http.Get("http://" + ln.Addr().String() + "/debug/ctxleak/status")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var st watch.Status
	json.NewDecoder(resp.Body).Decode(&st)
	fmt.Println(st.Schema, st.Watched, resp.Header.Get("Cache-Control"))
	// Output: ctxleak.watch/v1 0 no-store
}
