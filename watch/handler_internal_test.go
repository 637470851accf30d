package watch

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHandlerRefusesRemoteClients(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		addr string
		code int
	}{
		{Options{}, "127.0.0.1:5000", http.StatusOK},
		{Options{}, "[::1]:5000", http.StatusOK},
		{Options{}, "192.0.2.7:5000", http.StatusForbidden},
		{Options{AllowRemote: true}, "192.0.2.7:5000", http.StatusOK},
	} {
		w := New(tc.opts)
		r := httptest.NewRequest("GET", "/debug/ctxleak/status", nil)
		r.RemoteAddr = tc.addr
		rec := httptest.NewRecorder()
		w.Handler().ServeHTTP(rec, r)
		w.Close()
		if rec.Code != tc.code {
			t.Errorf("client %s, AllowRemote %v: %d, want %d", tc.addr, tc.opts.AllowRemote, rec.Code, tc.code)
		}
	}
}

// TestOneDumpAtATime asks for a dump on a real server while the watcher
// holds its dump token, as it does while a report's dump is taken.
func TestOneDumpAtATime(t *testing.T) {
	w := New(Options{AllowHeapDump: true})
	defer w.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: w.Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	w.busy <- struct{}{}
	for _, ep := range []string{"holders", "heapdump"} {
		resp, err := http.Get("http://" + ln.Addr().String() + "/debug/ctxleak/" + ep)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("%s while a dump is taken: %s, want 429", ep, resp.Status)
		}
	}
	<-w.busy
}
