package scenarios

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// httpServer runs a real net/http server on 127.0.0.1 and a real client
// that sends env.Tasks requests, one after another, each with a body of
// PayloadBytes/Tasks bytes. The handler reads the body into a tracked
// payload, puts it in the request context, starts background work with that
// context and answers 202 Accepted.
func httpServer(env *Env) error {
	n := env.Tasks
	size := env.PayloadBytes / int64(n)

	gate := make(chan struct{})
	var background sync.WaitGroup
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != size {
			http.Error(w, "want a body of "+strconv.FormatInt(size, 10)+" bytes", http.StatusBadRequest)
			return
		}
		body := env.PayloadOf(size)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ctx := withPayload(r.Context(), body)
		background.Add(1)
		go task(ctx, gate, &background, 0, 1)
		w.WriteHeader(http.StatusAccepted)
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	transport := &http.Transport{}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	defer func() {
		transport.CloseIdleConnections()
		srv.Close()
		<-served
	}()

	url := "http://" + ln.Addr().String() + "/upload"
	for i := range n {
		if err := post(client, url, size); err != nil {
			close(gate)
			return fmt.Errorf("request %d of %d: %w", i+1, n, err)
		}
	}
	env.Phase("responses-received")
	close(gate)
	background.Wait()
	env.Phase("background-done")
	return nil
}

// post sends one request with a body of size bytes, streamed without
// allocating it, and checks for 202 Accepted.
func post(client *http.Client, url string, size int64) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url,
		io.LimitReader(patternReader{}, size))
	if err != nil {
		return err
	}
	req.ContentLength = size
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusAccepted {
		return errors.New(resp.Status + ": " + string(msg))
	}
	return nil
}

// patternReader is an endless stream of a repeated byte pattern.
type patternReader struct{}

func (patternReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte('a' + i%26)
	}
	return len(p), nil
}
